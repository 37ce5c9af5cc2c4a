import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import resourceQuota from './plugin.js';

export const handler = createStatefulAdmissionHandler(resourceQuota);
