import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import persistentVolumeClaimResize from './plugin.js';

export const handler = createStatefulAdmissionHandler(persistentVolumeClaimResize);
