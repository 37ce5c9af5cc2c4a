import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import alwaysDeny from './plugin.js';

export const handler = createAdmissionHandler(alwaysDeny);
