import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import priority from './plugin.js';

export const handler = createStatefulAdmissionHandler(priority);
