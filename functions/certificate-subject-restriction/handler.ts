import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import certificateSubjectRestriction from './plugin.js';

export const handler = createAdmissionHandler(certificateSubjectRestriction);
