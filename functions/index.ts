// Every plugin this project serves. The local server, the emitted webhook configuration and
// serverless.yml's function list derive from this list; a test proves they agree.
import type { AnyAdmissionPlugin } from '../lib/admission/plugin.js';
import alwaysPullImages from './always-pull-images/plugin.js';

export const plugins: readonly AnyAdmissionPlugin[] = [alwaysPullImages];

export function pluginByName(name: string): AnyAdmissionPlugin | undefined {
  return plugins.find((p) => p.metadata.name === name);
}
