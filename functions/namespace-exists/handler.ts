import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import namespaceExists from './plugin.js';

export const handler = createStatefulAdmissionHandler(namespaceExists);
