import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import taintNodesByCondition from './plugin.js';

export const handler = createAdmissionHandler(taintNodesByCondition);
