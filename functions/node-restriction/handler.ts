import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import nodeRestriction from './plugin.js';

export const handler = createStatefulAdmissionHandler(nodeRestriction);
