import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import nodeRestriction from './plugin.js';

export const handler = createAdmissionHandler(nodeRestriction);
