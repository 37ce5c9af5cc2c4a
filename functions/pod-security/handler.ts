import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import podSecurity from './plugin.js';

export const handler = createStatefulAdmissionHandler(podSecurity);
