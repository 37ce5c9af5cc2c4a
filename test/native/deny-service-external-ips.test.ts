// DenyServiceExternalIPs natively: upstream's TestAdmission (plugin/pkg/admission/network/
// denyserviceexternalips/admission_test.go), as test/support/cases holds them, plus the operations
// and subresources it leaves alone, answered by the plugin and by its compiled policy on every
// version from 1.30.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/deny-service-external-ips/plugin.js';
import { ENVIRONMENT_VERSIONS } from '../../lib/cel/cel-env.js';
import type { KubeObject } from '../../lib/admission/types.js';
import type { ReviewInput } from '../support/review.js';
import { ADMISSION_CASES } from '../support/cases/deny-service-external-ips.js';
import { NativeCluster, configured, expectSameValidationOf, nativeObjectsOf } from './support/proof.js';

function service(...externalIPs: string[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace: 'test-ns', name: 'test-svc' },
    spec: { externalIPs },
  };
}

const SERVICES = { kind: { kind: 'Service' }, resource: { resource: 'services' } } as const;

const cases: { name: string; input: ReviewInput; refused: boolean }[] = [
  // TestAdmission
  ...ADMISSION_CASES.map(({ name, newIPs, oldIPs, fail }) => ({
    name,
    refused: fail,
    input: {
      ...SERVICES,
      operation: oldIPs === undefined ? ('CREATE' as const) : ('UPDATE' as const),
      object: service(...newIPs),
      oldObject: oldIPs === undefined ? null : service(...oldIPs),
    },
  })),
  // TestHandles and TestOtherResources, as the rules and shouldIgnore leave them.
  {
    name: 'status subresource',
    refused: false,
    input: { ...SERVICES, subResource: 'status', object: service('1.1.1.1') },
  },
  { name: 'delete', refused: false, input: { ...SERVICES, operation: 'DELETE', oldObject: service('1.1.1.1') } },
  {
    name: 'another group',
    refused: false,
    input: {
      kind: { group: 'example.com', kind: 'Service' },
      resource: { group: 'example.com', resource: 'services' },
      object: service('1.1.1.1'),
    },
  },
];

describe.each(ENVIRONMENT_VERSIONS)('on Kubernetes %s', (version) => {
  const cluster = new NativeCluster(nativeObjectsOf(configured(plugin), version), version);

  it.each(cases)('$name', async ({ input, refused }) => {
    const webhook = await expectSameValidationOf(plugin, undefined, cluster, input);
    expect(webhook.wire.response?.allowed).toBe(!refused);
  });
});
