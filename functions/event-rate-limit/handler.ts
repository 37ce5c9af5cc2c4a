import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import eventRateLimit from './plugin.js';

export const handler = createStatefulAdmissionHandler(eventRateLimit);
