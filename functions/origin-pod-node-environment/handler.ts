import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import originPodNodeEnvironment from './plugin.js';

export const handler = createStatefulAdmissionHandler(originPodNodeEnvironment);
