import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import namespaceReservation from './plugin.js';

export const handler = createAdmissionHandler(namespaceReservation);
