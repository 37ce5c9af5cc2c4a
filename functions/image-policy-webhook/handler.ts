import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import imagePolicyWebhook from './plugin.js';

export const handler = createStatefulAdmissionHandler(imagePolicyWebhook);
