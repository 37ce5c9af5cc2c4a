import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import storageObjectInUseProtection from './plugin.js';

export const handler = createAdmissionHandler(storageObjectInUseProtection);
