import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import runtimeClass from './plugin.js';

export const handler = createStatefulAdmissionHandler(runtimeClass);
