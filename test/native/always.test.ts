// AlwaysAdmit and AlwaysDeny natively: upstream's TestAdmissionNonNilAttribute/TestHandles
// (plugin/pkg/admission/admit) and TestAdmission/TestHandles (plugin/pkg/admission/deny), ported
// anew: every operation, answered by the plugin and by its compiled policy.
import { describe, expect, it } from 'vitest';
import alwaysAdmit from '../../functions/always-admit/plugin.js';
import alwaysDeny from '../../functions/always-deny/plugin.js';
import type { KubeObject, Operation } from '../../lib/admission/types.js';
import { OPERATIONS } from '../../lib/admission/types.js';
import { ENVIRONMENT_VERSIONS } from '../../lib/cel/cel-env.js';
import type { ReviewInput } from '../support/review.js';
import { NativeCluster, configured, expectSameValidationOf, nativeObjectsOf } from './support/proof.js';

const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: '123', namespace: 'test' }, spec: {} };
const inputOf = (operation: Operation): ReviewInput => ({
  operation,
  object: operation === 'DELETE' ? null : pod,
  oldObject: operation === 'CREATE' ? null : pod,
  ...(operation === 'CONNECT' && { kind: { kind: 'PodExecOptions' }, subResource: 'exec' }),
});

describe.each(ENVIRONMENT_VERSIONS)('on Kubernetes %s', (version) => {
  const plugins = [
    { plugin: alwaysAdmit, refused: false },
    { plugin: alwaysDeny, refused: true },
  ];
  describe.each(plugins)('$plugin.metadata.upstreamName', ({ plugin, refused }) => {
    const enabled = configured(plugin, {});
    const cluster = new NativeCluster(nativeObjectsOf(enabled, version), version);
    it.each(OPERATIONS)('%s', async (operation) => {
      const input = inputOf(operation);
      const webhook = await expectSameValidationOf(plugin, enabled.config, cluster, input);
      expect(webhook.wire.response?.allowed).toBe(!refused);
    });
  });
});
