import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import clusterResourceOverride from './plugin.js';

export const handler = createStatefulAdmissionHandler(clusterResourceOverride);
