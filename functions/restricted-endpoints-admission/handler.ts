import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import restrictedEndpointsAdmission from './plugin.js';

export const handler = createAdmissionHandler(restrictedEndpointsAdmission);
