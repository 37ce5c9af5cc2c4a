import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import clusterResourceQuota from './plugin.js';

export const handler = createStatefulAdmissionHandler(clusterResourceQuota);
