import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import extendedResourceToleration from './plugin.js';

export const handler = createAdmissionHandler(extendedResourceToleration);
