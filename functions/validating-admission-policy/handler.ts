import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import validatingAdmissionPolicy from './plugin.js';

export const handler = createStatefulAdmissionHandler(validatingAdmissionPolicy);
