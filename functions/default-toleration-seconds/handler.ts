import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import defaultTolerationSeconds from './plugin.js';

export const handler = createAdmissionHandler(defaultTolerationSeconds);
