import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import alwaysAdmit from './plugin.js';

export const handler = createAdmissionHandler(alwaysAdmit);
