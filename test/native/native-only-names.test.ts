// The native-only plugins' names live in lib/config (every command's line about their entries)
// and their compilers in infra/native: the two lists are one.
import { describe, expect, it } from 'vitest';
import { nativeOnlyPlugins } from '../../infra/native/native-only.js';
import { NATIVE_ONLY_PLUGIN_NAMES } from '../../lib/config/known-plugins.js';
import { ignoredLine } from '../../lib/config/plugins.js';

describe('native-only plugins', () => {
  it('are named once, in lib/config, for every command', () => {
    expect([...NATIVE_ONLY_PLUGIN_NAMES].sort()).toEqual(nativeOnlyPlugins.map((p) => p.metadata.upstreamName).sort());
  });

  it('an entry naming one is served natively, one naming another unserved plugin is ignored', () => {
    expect(ignoredLine('CertificateApproval')).toBe(
      'CertificateApproval: served only as a native policy: npm run emit -- --native --kubernetes-version X.Y (1.30 or later)',
    );
    expect(ignoredLine('ServiceAccount')).toMatch(/^ServiceAccount: not served by this project, entry ignored/);
  });
});
