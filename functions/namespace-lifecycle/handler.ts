import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import namespaceLifecycle from './plugin.js';

export const handler = createStatefulAdmissionHandler(namespaceLifecycle);
