import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import podTolerationRestriction from './plugin.js';

export const handler = createStatefulAdmissionHandler(podTolerationRestriction);
