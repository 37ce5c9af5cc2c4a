import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import podNodeSelector from './plugin.js';

export const handler = createStatefulAdmissionHandler(podNodeSelector);
