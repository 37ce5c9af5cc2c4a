import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import defaultIngressClass from './plugin.js';

export const handler = createStatefulAdmissionHandler(defaultIngressClass);
