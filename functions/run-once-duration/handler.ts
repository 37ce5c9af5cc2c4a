import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import runOnceDuration from './plugin.js';

export const handler = createStatefulAdmissionHandler(runOnceDuration);
