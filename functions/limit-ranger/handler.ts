import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import limitRanger from './plugin.js';

export const handler = createStatefulAdmissionHandler(limitRanger);
