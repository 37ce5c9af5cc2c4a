import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import externalIpRanger from './plugin.js';

export const handler = createAdmissionHandler(externalIpRanger);
