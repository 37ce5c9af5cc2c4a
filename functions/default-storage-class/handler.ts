import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import defaultStorageClass from './plugin.js';

export const handler = createStatefulAdmissionHandler(defaultStorageClass);
