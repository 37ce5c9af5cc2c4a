import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import limitPodHardAntiAffinityTopology from './plugin.js';

export const handler = createAdmissionHandler(limitPodHardAntiAffinityTopology);
