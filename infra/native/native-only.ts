// Plugins only an apiserver can serve: they ask its authorizer, which a webhook cannot. They have
// no Lambda and stay out of functions/index.ts (which drives the local server, packaging and the
// webhooks); `emit --native` compiles them from their AdmissionConfiguration entries.
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';

export const nativeOnlyPlugins: readonly AnyAdmissionPlugin[] = [];
