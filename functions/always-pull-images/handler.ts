import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import alwaysPullImages from './plugin.js';

export const handler = createAdmissionHandler(alwaysPullImages);
