import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import podNodeConstraints from './plugin.js';

export const handler = createAdmissionHandler(podNodeConstraints);
