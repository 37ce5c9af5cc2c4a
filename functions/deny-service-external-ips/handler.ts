import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import denyServiceExternalIPs from './plugin.js';

export const handler = createAdmissionHandler(denyServiceExternalIPs);
