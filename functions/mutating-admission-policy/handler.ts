import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import mutatingAdmissionPolicy from './plugin.js';

export const handler = createStatefulAdmissionHandler(mutatingAdmissionPolicy);
