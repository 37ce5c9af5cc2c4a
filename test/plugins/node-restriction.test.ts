import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin, { modifiedLabels, type NodeRestrictionConfig } from '../../functions/node-restriction/plugin.js';
import type { KubeObject, Operation } from '../../lib/admission/types.js';
import type { ReviewInput } from '../support/review.js';
import { deniedMessage, runPhase } from '../support/review.js';
import { configErrorOf } from '../support/config-error.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, testStore } from '../support/dynamodb.js';
import { gatewayEvent, lambdaContext } from '../support/gateway-event.js';
import { review } from '../support/review.js';
import { setLogSink } from '../../lib/http/log.js';
import { createRequestState, localDynamoDb } from '../../lib/state/index.js';
import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';

const SOURCE = { file: 'test', baseDir: '.' };
const configure = (raw?: unknown) => plugin.configure!(raw, SOURCE) as NodeRestrictionConfig;
const DEFAULTS = configure(undefined);

const mynode = { username: 'system:node:mynode', groups: ['system:nodes'] };
const bob = { username: 'bob', groups: ['system:authenticated'] };

type Obj = KubeObject | null;

function makeTestPod(namespace: string, name: string, node: string, mirror: boolean): KubeObject {
  const pod: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace, name, uid: 'pod-uid' },
    spec: { nodeName: node },
  };
  if (mirror) {
    pod.metadata!.annotations = { 'kubernetes.io/config.mirror': 'true' };
    pod.metadata!.ownerReferences = [
      { apiVersion: 'v1', kind: 'Node', name: node, uid: `${node}-uid`, controller: true },
    ];
  }
  return pod;
}
const withLabels = (pod: KubeObject, labels: Record<string, string> | undefined): KubeObject => ({
  ...pod,
  metadata: { ...pod.metadata, labels },
});
const withSpec = (pod: KubeObject, spec: Record<string, unknown>): KubeObject => ({
  ...pod,
  spec: { ...(pod.spec as object), ...spec },
});
const makeTestPodEviction = (name: string): KubeObject => ({
  apiVersion: 'policy/v1beta1',
  kind: 'Eviction',
  metadata: { name, namespace: 'ns' },
});
function makeTokenRequest(podname: string, poduid: string, audiences: string[]): KubeObject {
  const spec: Record<string, unknown> = { audiences };
  if (podname !== '') spec.boundObjectRef = { kind: 'Pod', apiVersion: 'v1', name: podname, uid: poduid };
  return { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: {}, spec };
}

const KUBELET_LABELS = [
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/instance-type',
  'beta.kubernetes.io/os',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'kubernetes.io/arch',
  'kubernetes.io/hostname',
  'kubernetes.io/os',
  'node.kubernetes.io/instance-type',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
];
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

function setLabels(node: KubeObject, keys: string[], value: string): KubeObject {
  const labels = { ...(node.metadata?.labels ?? {}) };
  for (const key of keys) labels[key] = value || 'value';
  return { ...node, metadata: { ...node.metadata, labels } };
}
const allowedUpdateKeys = [
  'foo',
  'example.com/foo',
  ...KUBELET_LABELS,
  'kubelet.kubernetes.io/foo',
  'foo.kubelet.kubernetes.io/foo',
  'node.kubernetes.io/foo',
  'foo.node.kubernetes.io/foo',
  ...KUBELET_LABEL_NAMESPACES.flatMap((ns) => [`${ns}/foo`, `foo.${ns}/foo`]),
];
const forbiddenKeys = [
  'node-restriction.kubernetes.io/foo',
  'foo.node-restriction.kubernetes.io/foo',
  'other.kubernetes.io/foo',
  'other.k8s.io/foo',
];
const setAllowedUpdateLabels = (n: KubeObject, v: string) => setLabels(n, allowedUpdateKeys, v);
const setAllowedCreateLabels = setAllowedUpdateLabels;
const setForbiddenCreateLabels = (n: KubeObject, v: string) => setLabels(n, forbiddenKeys, v);
const setForbiddenUpdateLabels = setForbiddenCreateLabels;
const setAllLabels = (n: KubeObject, v: string) => setForbiddenUpdateLabels(setAllowedUpdateLabels(n, v), v);
const FORBIDDEN_LIST =
  'foo.node-restriction.kubernetes.io/foo, node-restriction.kubernetes.io/foo, other.k8s.io/foo, other.kubernetes.io/foo';

let rsaKeys: forge.pki.rsa.KeyPair | undefined;
function createCSR(cn: string, signer: string, validCsr: boolean): KubeObject {
  let pem = '-----BEGIN CERTIFICATE REQUEST-----\n-----END CERTIFICATE REQUEST-----';
  if (validCsr) {
    rsaKeys ??= forge.pki.rsa.generateKeyPair({ bits: 1024, e: 0x10001 });
    const csr = forge.pki.createCertificationRequest();
    csr.publicKey = rsaKeys.publicKey;
    csr.setSubject([{ shortName: 'CN', value: cn }]);
    csr.sign(rsaKeys.privateKey, forge.md.sha256.create());
    pem = forge.pki.certificationRequestToPem(csr);
  }
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: {},
    spec: { request: Buffer.from(pem).toString('base64'), signerName: signer },
  };
}

// Resources and kinds as upstream's attribute records name them.
const POD = { kind: { kind: 'Pod' }, resource: { resource: 'pods' } };
const EVICTION = {
  kind: { group: 'policy', version: 'v1beta1', kind: 'Eviction' },
  resource: { group: '', version: 'v1', resource: 'pods' },
};
const NODE = { kind: { kind: 'Node' }, resource: { resource: 'nodes' } };
const TOKEN = {
  kind: { group: 'authentication.k8s.io', kind: 'TokenRequest' },
  resource: { group: '', resource: 'serviceaccounts' },
};
const CONFIGMAP = { kind: { kind: 'ConfigMap' }, resource: { resource: 'configmap' } };
const LEASE = {
  kind: { group: 'coordination.k8s.io', version: 'v1beta1', kind: 'Lease' },
  resource: { group: 'coordination.k8s.io', version: 'v1beta1', resource: 'leases' },
};
const CSINODE = {
  kind: { group: 'storage.k8s.io', kind: 'CSINode' },
  resource: { group: 'storage.k8s.io', resource: 'csinodes' },
};
const CSR = {
  kind: { group: 'certificates.k8s.io', kind: 'CertificateSigningRequest' },
  resource: { group: 'certificates.k8s.io', resource: 'certificatesigningrequests' },
};
type Target = typeof POD | typeof EVICTION | typeof LEASE;

interface Case {
  name: string;
  input: ReviewInput;
  /** Upstream's expectation: '' allowed, else a substring of the denial. */
  err: string;
  config?: NodeRestrictionConfig;
  /** Upstream's `noExistingPods` (and no Node): nothing learned. */
  empty?: true;
  /** Where a lookup upstream makes is not available: what we answer instead ('' allowed). */
  differs?: { err: string; why: string };
}

/** admission.NewAttributesRecord(object, oldObject, kind, namespace, name, resource, subresource, op, user). */
function rec(
  object: Obj,
  oldObject: Obj,
  target: Target,
  namespace: string,
  name: string,
  subResource: string,
  operation: Operation,
  userInfo = mynode,
): ReviewInput {
  return { ...target, object, oldObject, namespace, name, subResource, operation, userInfo };
}

// Judged cases read the learned state but teach nothing (no observe): one case's DELETE must not
// forget a pod the next case needs, as upstream's lister is fixed per case.
async function decide(c: Pick<Case, 'input' | 'config' | 'empty'>): Promise<string | undefined> {
  const state = (c.empty ? empty : learned).state({ uid: 'judge', dryRun: false });
  return deniedMessage(await runPhase(plugin, 'validate', c.input, c.config ?? DEFAULTS, state));
}

async function expectOutcome(c: Case) {
  const want = c.differs?.err ?? c.err;
  const message = await decide(c);
  if (want === '') expect(message).toBeUndefined();
  else expect(message).toContain(want);
}

const mymirrorpod = makeTestPod('ns', 'mymirrorpod', 'mynode', true);
const othermirrorpod = makeTestPod('ns', 'othermirrorpod', 'othernode', true);
const unboundmirrorpod = makeTestPod('ns', 'unboundmirrorpod', '', true);
const mypod = makeTestPod('ns', 'mypod', 'mynode', false);
const otherpod = makeTestPod('ns', 'otherpod', 'othernode', false);
const unboundpod = makeTestPod('ns', 'unboundpod', '', false);
const _unnamedpod = makeTestPod('ns', '', 'mynode', false);
const mymirrorpodEviction = makeTestPodEviction('mymirrorpod');
const othermirrorpodEviction = makeTestPodEviction('othermirrorpod');
const unboundmirrorpodEviction = makeTestPodEviction('unboundmirrorpod');
const mypodEviction = makeTestPodEviction('mypod');
const otherpodEviction = makeTestPodEviction('otherpod');
const unboundpodEviction = makeTestPodEviction('unboundpod');
const unnamedEviction = makeTestPodEviction('');
const aLabeledPod = withLabels(mypod, { 'label-a': 'value-a' });
const abLabeledPod = withLabels(mypod, { 'label-a': 'value-a', 'label-b': 'value-b' });

const mynodeObj: KubeObject = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'mynode', uid: 'mynode-uid' } };
const configSource = (name: string, uid: string) => ({
  configMap: { name, namespace: 'bar', uid, kubeletConfigKey: 'kubelet' },
});
const mynodeObjConfigA: KubeObject = { ...mynodeObj, spec: { configSource: configSource('foo', 'fooUID') } };
const mynodeObjConfigB: KubeObject = { ...mynodeObj, spec: { configSource: configSource('qux', 'quxUID') } };
const mynodeObjTaintA: KubeObject = { ...mynodeObj, spec: { taints: [{ key: 'mykey', value: 'A' }] } };
const mynodeObjTaintB: KubeObject = { ...mynodeObj, spec: { taints: [{ key: 'mykey', value: 'B' }] } };
const othernodeObj: KubeObject = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'othernode' } };

const lease = (name: string, namespace: string): KubeObject => ({
  apiVersion: 'coordination.k8s.io/v1beta1',
  kind: 'Lease',
  metadata: { name, namespace },
  spec: { holderIdentity: 'mynode', leaseDurationSeconds: 40, renewTime: new Date().toISOString() },
});
const theLease = lease('mynode', 'kube-node-lease');
const leaseWrongNS = lease('mynode', 'foo');
const leaseWrongName = lease('foo', 'kube-node-lease');
const csiNode = (name: string): KubeObject => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'CSINode',
  metadata: { name },
  spec: {
    drivers: [
      { name: 'com.example.csi/mydriver', nodeID: `com.example.csi/${name}`, topologyKeys: ['com.example.csi/zone'] },
    ],
  },
});
const nodeInfo = csiNode('mynode');
const nodeInfoWrongName = csiNode('foo');

const sapod = withSpec(makeTestPod('ns', 'mysapod', 'mynode', true), { serviceAccountName: 'foo' });
const secretpod = withSpec(makeTestPod('ns', 'mysecretpod', 'mynode', true), {
  volumes: [{ secret: { secretName: 'foo' } }],
});
const configmappod = withSpec(makeTestPod('ns', 'myconfigmappod', 'mynode', true), {
  volumes: [{ configMap: { name: 'foo' } }],
});
const ctbpod = withSpec(makeTestPod('ns', 'myctbpod', 'mynode', true), {
  volumes: [{ projected: { sources: [{ clusterTrustBundle: { name: 'foo' } }] } }],
});
const pvcpod = withSpec(makeTestPod('ns', 'mypvcpod', 'mynode', true), {
  volumes: [{ persistentVolumeClaim: { claimName: 'foo' } }],
});

const UNLEARNED_POD = {
  err: '',
  why: 'a token for a pod not learned yet is allowed, so pods older than the webhook keep refreshing tokens (upstream: NotFound)',
};
const AUDIENCE_LOOKUP = {
  err: '',
  why: "whether the audience is in the pod's volumes needs the pod spec, CSIDrivers, PVCs and PVs (and the authorizer): not checked, allowed",
};

// Upstream's existingPods and Node, taught as a cluster would teach them.
const mynodeStatus: ReviewInput = rec(mynodeObj, mynodeObj, NODE as Target, '', 'mynode', 'status', 'UPDATE');
const scheduler = { username: 'system:kube-scheduler', groups: ['system:authenticated'] };
const binding = (pod: KubeObject, node: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Binding',
  metadata: { name: pod.metadata!.name, namespace: 'ns', uid: pod.metadata!.uid },
  target: { kind: 'Node', name: node },
});
const teach: { what: string; input: ReviewInput }[] = [
  { what: "mynode's status update (its stored Node)", input: mynodeStatus },
  {
    what: "mynode's status update of its mirror pod",
    input: rec(mymirrorpod, mymirrorpod, POD, 'ns', 'mymirrorpod', 'status', 'UPDATE'),
  },
  {
    what: "othernode's status update of its mirror pod",
    input: rec(othermirrorpod, othermirrorpod, POD, 'ns', 'othermirrorpod', 'status', 'UPDATE', {
      username: 'system:node:othernode',
      groups: ['system:nodes'],
    }),
  },
  {
    what: 'an admin creates the unbound mirror pod',
    input: rec(unboundmirrorpod, null, POD, 'ns', 'unboundmirrorpod', '', 'CREATE', bob),
  },
  {
    what: 'an admin creates mypod unbound',
    input: rec(withSpec(mypod, { nodeName: '' }), null, POD, 'ns', 'mypod', '', 'CREATE', bob),
  },
  {
    what: 'the scheduler binds mypod to mynode',
    input: rec(
      binding(mypod, 'mynode'),
      null,
      { kind: { kind: 'Binding' }, resource: { resource: 'pods' } } as Target,
      'ns',
      'mypod',
      'binding',
      'CREATE',
      scheduler,
    ),
  },
  {
    what: 'an admin creates otherpod on othernode',
    input: rec(otherpod, null, POD, 'ns', 'otherpod', '', 'CREATE', bob),
  },
  { what: 'an admin creates unboundpod', input: rec(unboundpod, null, POD, 'ns', 'unboundpod', '', 'CREATE', bob) },
];

let learned: TestStore;
let empty: TestStore;
beforeAll(async () => {
  [learned, empty] = await Promise.all([testStore('node-restriction'), testStore('node-restriction-empty')]);
  const invoke = lambdaFor(plugin, learned, DEFAULTS);
  // Each write goes, as the apiserver sends it, to the judge (which admits it) and to the learning
  // webhook (which learns it).
  for (const { what, input } of teach) {
    for (const endpoint of ['validate', 'learn'] as const) {
      const result = await invoke(endpoint, input);
      expect(result.statusCode, what).toBe(200);
      expect(result.review!.response!.allowed, what).toBe(true);
    }
  }
});
afterAll(() => {
  learned.close();
  empty.close();
});

// Test_nodePlugin_Admit, in upstream's order.
const admitCases: Case[] = [
  // Mirror pods bound to us
  {
    name: 'allow creating a mirror pod bound to self',
    input: rec(mymirrorpod, null, POD, 'ns', 'mymirrorpod', '', 'CREATE'),
    err: '',
  },
  {
    name: 'forbid update of mirror pod bound to self',
    input: rec(mymirrorpod, mymirrorpod, POD, 'ns', 'mymirrorpod', '', 'UPDATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'allow delete of mirror pod bound to self',
    input: rec(null, mymirrorpod, POD, 'ns', 'mymirrorpod', '', 'DELETE'),
    err: '',
  },
  {
    name: 'forbid create of mirror pod status bound to self',
    input: rec(mymirrorpod, null, POD, 'ns', 'mymirrorpod', 'status', 'CREATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'allow update of mirror pod status bound to self',
    input: rec(mymirrorpod, mymirrorpod, POD, 'ns', 'mymirrorpod', 'status', 'UPDATE'),
    err: '',
  },
  {
    name: 'forbid delete of mirror pod status bound to self',
    input: rec(null, mymirrorpod, POD, 'ns', 'mymirrorpod', 'status', 'DELETE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'allow create of eviction for mirror pod bound to self',
    input: rec(mymirrorpodEviction, null, EVICTION, 'ns', 'mymirrorpod', 'eviction', 'CREATE'),
    err: '',
  },
  {
    name: 'forbid update of eviction for mirror pod bound to self',
    input: rec(mymirrorpodEviction, null, EVICTION, 'ns', 'mymirrorpod', 'eviction', 'UPDATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid delete of eviction for mirror pod bound to self',
    input: rec(mymirrorpodEviction, null, EVICTION, 'ns', 'mymirrorpod', 'eviction', 'DELETE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'allow create of unnamed eviction for mirror pod bound to self',
    input: rec(unnamedEviction, null, EVICTION, 'ns', 'mymirrorpod', 'eviction', 'CREATE'),
    err: '',
  },

  // Mirror pods bound to another node
  {
    name: 'forbid creating a mirror pod bound to another',
    input: rec(othermirrorpod, null, POD, 'ns', 'othermirrorpod', '', 'CREATE'),
    err: 'spec.nodeName set to itself',
  },
  {
    name: 'forbid update of mirror pod bound to another',
    input: rec(othermirrorpod, othermirrorpod, POD, 'ns', 'othermirrorpod', '', 'UPDATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid delete of mirror pod bound to another',
    input: rec(null, othermirrorpod, POD, 'ns', 'othermirrorpod', '', 'DELETE'),
    err: 'spec.nodeName set to itself',
  },
  {
    name: 'forbid create of mirror pod status bound to another',
    input: rec(othermirrorpod, null, POD, 'ns', 'othermirrorpod', 'status', 'CREATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid update of mirror pod status bound to another',
    input: rec(othermirrorpod, othermirrorpod, POD, 'ns', 'othermirrorpod', 'status', 'UPDATE'),
    err: 'spec.nodeName set to itself',
  },
  {
    name: 'forbid delete of mirror pod status bound to another',
    input: rec(null, othermirrorpod, POD, 'ns', 'othermirrorpod', 'status', 'DELETE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid create of eviction for mirror pod bound to another',
    input: rec(othermirrorpodEviction, null, EVICTION, 'ns', 'othermirrorpod', 'eviction', 'CREATE'),
    err: 'spec.nodeName set to itself',
  },
  {
    name: 'forbid update of eviction for mirror pod bound to another',
    input: rec(othermirrorpodEviction, null, EVICTION, 'ns', 'othermirrorpod', 'eviction', 'UPDATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid delete of eviction for mirror pod bound to another',
    input: rec(othermirrorpodEviction, null, EVICTION, 'ns', 'othermirrorpod', 'eviction', 'DELETE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid create of unnamed eviction for mirror pod to another',
    input: rec(unnamedEviction, null, EVICTION, 'ns', 'othermirrorpod', 'eviction', 'CREATE'),
    err: 'spec.nodeName set to itself',
  },

  // Mirror pods not bound to any node
  {
    name: 'forbid creating a mirror pod unbound',
    input: rec(unboundmirrorpod, null, POD, 'ns', 'unboundmirrorpod', '', 'CREATE'),
    err: 'spec.nodeName set to itself',
  },
  {
    name: 'forbid update of mirror pod unbound',
    input: rec(unboundmirrorpod, unboundmirrorpod, POD, 'ns', 'unboundmirrorpod', '', 'UPDATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid delete of mirror pod unbound',
    input: rec(null, unboundmirrorpod, POD, 'ns', 'unboundmirrorpod', '', 'DELETE'),
    err: 'spec.nodeName set to itself',
  },
  {
    name: 'forbid create of mirror pod status unbound',
    input: rec(unboundmirrorpod, null, POD, 'ns', 'unboundmirrorpod', 'status', 'CREATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid update of mirror pod status unbound',
    input: rec(unboundmirrorpod, unboundmirrorpod, POD, 'ns', 'unboundmirrorpod', 'status', 'UPDATE'),
    err: 'spec.nodeName set to itself',
  },
  {
    name: 'forbid delete of mirror pod status unbound',
    input: rec(null, unboundmirrorpod, POD, 'ns', 'unboundmirrorpod', 'status', 'DELETE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid create of eviction for mirror pod unbound',
    input: rec(unboundmirrorpodEviction, null, EVICTION, 'ns', 'unboundmirrorpod', 'eviction', 'CREATE'),
    err: 'spec.nodeName set to itself',
  },
  {
    name: 'forbid update of eviction for mirror pod unbound',
    input: rec(unboundmirrorpodEviction, null, EVICTION, 'ns', 'unboundmirrorpod', 'eviction', 'UPDATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid delete of eviction for mirror pod unbound',
    input: rec(unboundmirrorpodEviction, null, EVICTION, 'ns', 'unboundmirrorpod', 'eviction', 'DELETE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid create of unnamed eviction for mirror pod unbound',
    input: rec(unnamedEviction, null, EVICTION, 'ns', 'unboundmirrorpod', 'eviction', 'CREATE'),
    err: 'spec.nodeName set to itself',
  },

  // Normal pods bound to us
  {
    name: 'forbid creating a normal pod bound to self',
    input: rec(mypod, null, POD, 'ns', 'mypod', '', 'CREATE'),
    err: 'can only create mirror pods',
  },
  {
    name: 'forbid update of normal pod bound to self',
    input: rec(mypod, mypod, POD, 'ns', 'mypod', '', 'UPDATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'allow delete of normal pod bound to self',
    input: rec(null, mypod, POD, 'ns', 'mypod', '', 'DELETE'),
    err: '',
  },
  {
    name: 'forbid create of normal pod status bound to self',
    input: rec(mypod, null, POD, 'ns', 'mypod', 'status', 'CREATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'allow update of normal pod status bound to self',
    input: rec(mypod, mypod, POD, 'ns', 'mypod', 'status', 'UPDATE'),
    err: '',
  },
  {
    name: 'forbid delete of normal pod status bound to self',
    input: rec(null, mypod, POD, 'ns', 'mypod', 'status', 'DELETE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid addition of pod status preexisting labels',
    input: rec(abLabeledPod, aLabeledPod, POD, 'ns', 'mypod', 'status', 'UPDATE'),
    err: 'cannot update labels through pod status',
  },
  {
    name: 'forbid deletion of pod status preexisting labels',
    input: rec(aLabeledPod, abLabeledPod, POD, 'ns', 'mypod', 'status', 'UPDATE'),
    err: 'cannot update labels through pod status',
  },
  {
    name: 'forbid deletion of all pod status preexisting labels',
    input: rec(aLabeledPod, mypod, POD, 'ns', 'mypod', 'status', 'UPDATE'),
    err: 'cannot update labels through pod status',
  },
  {
    name: 'forbid addition of pod status labels',
    input: rec(mypod, aLabeledPod, POD, 'ns', 'mypod', 'status', 'UPDATE'),
    err: 'cannot update labels through pod status',
  },
  {
    name: 'forbid update of eviction for normal pod bound to self',
    input: rec(mypodEviction, null, EVICTION, 'ns', 'mypod', 'eviction', 'UPDATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid delete of eviction for normal pod bound to self',
    input: rec(mypodEviction, null, EVICTION, 'ns', 'mypod', 'eviction', 'DELETE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'allow create of unnamed eviction for normal pod bound to self',
    input: rec(unnamedEviction, null, EVICTION, 'ns', 'mypod', 'eviction', 'CREATE'),
    err: '',
  },

  // Normal pods bound to another
  {
    name: 'forbid creating a normal pod bound to another',
    input: rec(otherpod, null, POD, 'ns', 'otherpod', '', 'CREATE'),
    err: 'can only create mirror pods',
  },
  {
    name: 'forbid update of normal pod bound to another',
    input: rec(otherpod, otherpod, POD, 'ns', 'otherpod', '', 'UPDATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid delete of normal pod bound to another',
    input: rec(null, otherpod, POD, 'ns', 'otherpod', '', 'DELETE'),
    err: 'spec.nodeName set to itself',
  },
  {
    name: 'forbid create of normal pod status bound to another',
    input: rec(otherpod, null, POD, 'ns', 'otherpod', 'status', 'CREATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid update of normal pod status bound to another',
    input: rec(otherpod, otherpod, POD, 'ns', 'otherpod', 'status', 'UPDATE'),
    err: 'spec.nodeName set to itself',
  },
  {
    name: 'forbid delete of normal pod status bound to another',
    input: rec(null, otherpod, POD, 'ns', 'otherpod', 'status', 'DELETE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid create of eviction for normal pod bound to another',
    input: rec(otherpodEviction, null, EVICTION, 'ns', 'otherpod', 'eviction', 'CREATE'),
    err: 'spec.nodeName set to itself',
  },
  {
    name: 'forbid update of eviction for normal pod bound to another',
    input: rec(otherpodEviction, null, EVICTION, 'ns', 'otherpod', 'eviction', 'UPDATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid delete of eviction for normal pod bound to another',
    input: rec(otherpodEviction, null, EVICTION, 'ns', 'otherpod', 'eviction', 'DELETE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid create of unnamed eviction for normal pod bound to another',
    input: rec(unnamedEviction, null, EVICTION, 'ns', 'otherpod', 'eviction', 'CREATE'),
    err: 'spec.nodeName set to itself',
  },

  // Normal pods not bound to any node
  {
    name: 'forbid creating a normal pod unbound',
    input: rec(unboundpod, null, POD, 'ns', 'unboundpod', '', 'CREATE'),
    err: 'can only create mirror pods',
  },
  {
    name: 'forbid update of normal pod unbound',
    input: rec(unboundpod, unboundpod, POD, 'ns', 'unboundpod', '', 'UPDATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid delete of normal pod unbound',
    input: rec(null, unboundpod, POD, 'ns', 'unboundpod', '', 'DELETE'),
    err: 'spec.nodeName set to itself',
  },
  {
    name: 'forbid create of normal pod status unbound',
    input: rec(unboundpod, null, POD, 'ns', 'unboundpod', 'status', 'CREATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid update of normal pod status unbound',
    input: rec(unboundpod, unboundpod, POD, 'ns', 'unboundpod', 'status', 'UPDATE'),
    err: 'spec.nodeName set to itself',
  },
  {
    name: 'forbid delete of normal pod status unbound',
    input: rec(null, unboundpod, POD, 'ns', 'unboundpod', 'status', 'DELETE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid create of eviction for normal pod unbound',
    input: rec(unboundpodEviction, null, EVICTION, 'ns', 'unboundpod', 'eviction', 'CREATE'),
    err: 'spec.nodeName set to itself',
  },
  {
    name: 'forbid update of eviction for normal pod unbound',
    input: rec(unboundpodEviction, null, EVICTION, 'ns', 'unboundpod', 'eviction', 'UPDATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid delete of eviction for normal pod unbound',
    input: rec(unboundpodEviction, null, EVICTION, 'ns', 'unboundpod', 'eviction', 'DELETE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid create of unnamed eviction for normal unbound',
    input: rec(unnamedEviction, null, EVICTION, 'ns', 'unboundpod', 'eviction', 'CREATE'),
    err: 'spec.nodeName set to itself',
  },

  // Missing pod
  {
    name: 'forbid delete of unknown pod',
    input: rec(null, null, POD, 'ns', 'unboundpod', '', 'DELETE'),
    err: 'not found',
    empty: true,
  },
  {
    name: 'forbid create of eviction for unknown pod',
    input: rec(mypodEviction, null, EVICTION, 'ns', 'mypod', 'eviction', 'CREATE'),
    err: 'not found',
    empty: true,
  },
  {
    name: 'forbid update of eviction for unknown pod',
    input: rec(mypodEviction, null, EVICTION, 'ns', 'mypod', 'eviction', 'UPDATE'),
    err: 'forbidden: unexpected operation',
    empty: true,
  },
  {
    name: 'forbid delete of eviction for unknown pod',
    input: rec(mypodEviction, null, EVICTION, 'ns', 'mypod', 'eviction', 'DELETE'),
    err: 'forbidden: unexpected operation',
    empty: true,
  },
  {
    name: 'forbid create of unnamed eviction for unknown pod',
    input: rec(unnamedEviction, null, EVICTION, 'ns', 'mypod', 'eviction', 'CREATE'),
    err: 'not found',
    empty: true,
  },

  // Eviction for unnamed pod
  {
    name: 'allow create of eviction for unnamed pod',
    input: rec(mypodEviction, null, EVICTION, 'ns', '', 'eviction', 'CREATE'),
    err: '',
  },
  {
    name: 'forbid update of eviction for unnamed pod',
    input: rec(mypodEviction, null, EVICTION, 'ns', '', 'eviction', 'UPDATE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid delete of eviction for unnamed pod',
    input: rec(mypodEviction, null, EVICTION, 'ns', '', 'eviction', 'DELETE'),
    err: 'forbidden: unexpected operation',
  },
  {
    name: 'forbid create of unnamed eviction for unnamed pod',
    input: rec(unnamedEviction, null, EVICTION, 'ns', '', 'eviction', 'CREATE'),
    err: 'could not determine pod from request data',
  },

  // Resource pods
  {
    name: 'forbid create of pod referencing service account',
    input: rec(sapod, null, POD, 'ns', 'mysapod', '', 'CREATE'),
    err: 'reference a service account',
  },
  {
    name: 'forbid create of pod referencing secret',
    input: rec(secretpod, null, POD, 'ns', 'mysecretpod', '', 'CREATE'),
    err: 'reference secrets',
  },
  {
    name: 'forbid create of pod referencing configmap',
    input: rec(configmappod, null, POD, 'ns', 'myconfigmappod', '', 'CREATE'),
    err: 'reference configmaps',
  },
  {
    name: 'forbid create of pod referencing clustertrustbundle',
    input: rec(ctbpod, null, POD, 'ns', 'myctbpod', '', 'CREATE'),
    err: 'reference clustertrustbundles',
  },
  {
    name: 'forbid create of pod referencing persistentvolumeclaim',
    input: rec(pvcpod, null, POD, 'ns', 'mypvcpod', '', 'CREATE'),
    err: 'reference persistentvolumeclaims',
  },

  // My node object
  { name: 'allow create of my node', input: rec(mynodeObj, null, NODE as Target, '', 'mynode', '', 'CREATE'), err: '' },
  {
    name: 'allow create of my node pulling name from object',
    input: rec(mynodeObj, null, NODE as Target, '', 'mynode', '', 'CREATE'),
    err: '',
  },
  {
    name: 'allow create of my node with taints',
    input: rec(mynodeObjTaintA, null, NODE as Target, '', 'mynode', '', 'CREATE'),
    err: '',
  },
  {
    name: 'allow create of my node with labels',
    input: rec(setAllowedCreateLabels(mynodeObj, ''), null, NODE as Target, '', 'mynode', '', 'CREATE'),
    err: '',
  },
  {
    name: 'forbid create of my node with forbidden labels',
    input: rec(setForbiddenCreateLabels(mynodeObj, ''), null, NODE as Target, '', 'mynode', '', 'CREATE'),
    err: `is not allowed to set the following labels: ${FORBIDDEN_LIST}`,
  },
  {
    name: 'allow update of my node',
    input: rec(mynodeObj, mynodeObj, NODE as Target, '', 'mynode', '', 'UPDATE'),
    err: '',
  },
  { name: 'allow delete of my node', input: rec(null, mynodeObj, NODE as Target, '', 'mynode', '', 'DELETE'), err: '' },
  {
    name: 'allow update of my node status',
    input: rec(mynodeObj, mynodeObj, NODE as Target, '', 'mynode', 'status', 'UPDATE'),
    err: '',
  },
  {
    name: 'forbid create of my node with non-nil configSource',
    input: rec(mynodeObjConfigA, null, NODE as Target, '', 'mynode', '', 'CREATE'),
    err: 'is not allowed to create pods with a non-nil configSource',
  },
  {
    name: 'forbid update of my node: nil configSource to new non-nil configSource',
    input: rec(mynodeObjConfigA, mynodeObj, NODE as Target, '', 'mynode', '', 'UPDATE'),
    err: 'update configSource to a new non-nil configSource',
  },
  {
    name: 'forbid update of my node: non-nil configSource to new non-nil configSource',
    input: rec(mynodeObjConfigB, mynodeObjConfigA, NODE as Target, '', 'mynode', '', 'UPDATE'),
    err: 'update configSource to a new non-nil configSource',
  },
  {
    name: 'allow update of my node: non-nil configSource unchanged',
    input: rec(mynodeObjConfigA, mynodeObjConfigA, NODE as Target, '', 'mynode', '', 'UPDATE'),
    err: '',
  },
  {
    name: 'allow update of my node: non-nil configSource to nil configSource',
    input: rec(mynodeObj, mynodeObjConfigA, NODE as Target, '', 'mynode', '', 'UPDATE'),
    err: '',
  },
  {
    name: 'allow update of my node: no change to taints',
    input: rec(mynodeObjTaintA, mynodeObjTaintA, NODE as Target, '', 'mynode', '', 'UPDATE'),
    err: '',
  },
  {
    name: 'allow update of my node: add allowed labels',
    input: rec(setAllowedUpdateLabels(mynodeObj, ''), mynodeObj, NODE as Target, '', 'mynode', '', 'UPDATE'),
    err: '',
  },
  {
    name: 'allow update of my node: remove allowed labels',
    input: rec(mynodeObj, setAllowedUpdateLabels(mynodeObj, ''), NODE as Target, '', 'mynode', '', 'UPDATE'),
    err: '',
  },
  {
    name: 'allow update of my node: modify allowed labels',
    input: rec(
      setAllowedUpdateLabels(mynodeObj, 'b'),
      setAllowedUpdateLabels(mynodeObj, 'a'),
      NODE as Target,
      '',
      'mynode',
      '',
      'UPDATE',
    ),
    err: '',
  },
  {
    name: 'allow update of my node: no change to labels',
    input: rec(setAllLabels(mynodeObj, ''), setAllLabels(mynodeObj, ''), NODE as Target, '', 'mynode', '', 'UPDATE'),
    err: '',
  },
  {
    name: 'allow update of my node: add allowed labels while forbidden labels exist unmodified',
    input: rec(
      setAllLabels(mynodeObj, ''),
      setForbiddenUpdateLabels(mynodeObj, ''),
      NODE as Target,
      '',
      'mynode',
      '',
      'UPDATE',
    ),
    err: '',
  },
  {
    name: 'allow update of my node: remove allowed labels while forbidden labels exist unmodified',
    input: rec(
      setForbiddenUpdateLabels(mynodeObj, ''),
      setAllLabels(mynodeObj, ''),
      NODE as Target,
      '',
      'mynode',
      '',
      'UPDATE',
    ),
    err: '',
  },
  {
    name: 'forbid update of my node: add taints',
    input: rec(mynodeObjTaintA, mynodeObj, NODE as Target, '', 'mynode', '', 'UPDATE'),
    err: 'is not allowed to modify taints',
  },
  {
    name: 'forbid update of my node: remove taints',
    input: rec(mynodeObj, mynodeObjTaintA, NODE as Target, '', 'mynode', '', 'UPDATE'),
    err: 'is not allowed to modify taints',
  },
  {
    name: 'forbid update of my node: change taints',
    input: rec(mynodeObjTaintA, mynodeObjTaintB, NODE as Target, '', 'mynode', '', 'UPDATE'),
    err: 'is not allowed to modify taints',
  },
  {
    name: 'forbid update of my node: add labels',
    input: rec(setForbiddenUpdateLabels(mynodeObj, ''), mynodeObj, NODE as Target, '', 'mynode', '', 'UPDATE'),
    err: `is not allowed to modify labels: ${FORBIDDEN_LIST}`,
  },
  {
    name: 'forbid update of my node: remove labels',
    input: rec(mynodeObj, setForbiddenUpdateLabels(mynodeObj, ''), NODE as Target, '', 'mynode', '', 'UPDATE'),
    err: `is not allowed to modify labels: ${FORBIDDEN_LIST}`,
  },
  {
    name: 'forbid update of my node: change labels',
    input: rec(
      setForbiddenUpdateLabels(mynodeObj, 'new'),
      setForbiddenUpdateLabels(mynodeObj, 'old'),
      NODE as Target,
      '',
      'mynode',
      '',
      'UPDATE',
    ),
    err: `is not allowed to modify labels: ${FORBIDDEN_LIST}`,
  },

  // Other node object
  {
    name: 'forbid create of other node',
    input: rec(othernodeObj, null, NODE as Target, '', 'othernode', '', 'CREATE'),
    err: 'is not allowed to modify node',
  },
  {
    name: 'forbid create of other node pulling name from object',
    input: rec(othernodeObj, null, NODE as Target, '', '', '', 'CREATE'),
    err: 'is not allowed to modify node',
  },
  {
    name: 'forbid update of other node',
    input: rec(othernodeObj, othernodeObj, NODE as Target, '', 'othernode', '', 'UPDATE'),
    err: 'is not allowed to modify node',
  },
  {
    name: 'forbid delete of other node',
    input: rec(null, othernodeObj, NODE as Target, '', 'othernode', '', 'DELETE'),
    err: 'is not allowed to modify node',
  },
  {
    name: 'forbid update of other node status',
    input: rec(othernodeObj, othernodeObj, NODE as Target, '', 'othernode', 'status', 'UPDATE'),
    err: 'is not allowed to modify node',
  },

  // Service accounts
  {
    name: 'forbid create of unbound token',
    input: rec(makeTokenRequest('', '', ['foo']), null, TOKEN as Target, 'ns', 'mysa', 'token', 'CREATE'),
    err: 'not bound to a pod',
  },
  {
    name: 'forbid create of token bound to nonexistant pod',
    input: rec(makeTokenRequest('nopod', 'someuid', ['foo']), null, TOKEN as Target, 'ns', 'mysa', 'token', 'CREATE'),
    err: 'not found',
    differs: UNLEARNED_POD,
  },
  {
    name: 'forbid create of token bound to pod without uid',
    input: rec(makeTokenRequest('mypod', '', ['foo']), null, TOKEN as Target, 'ns', 'mysa', 'token', 'CREATE'),
    err: 'pod binding without a uid',
  },
  {
    name: 'forbid create of token bound to pod scheduled on another node',
    input: rec(
      makeTokenRequest('otherpod', 'pod-uid', ['foo']),
      null,
      TOKEN as Target,
      'ns',
      'mysa',
      'token',
      'CREATE',
    ),
    err: 'pod scheduled on a different node',
  },
  {
    name: 'allow create of token bound to pod scheduled this node',
    input: rec(makeTokenRequest('mypod', 'pod-uid', ['foo']), null, TOKEN as Target, 'ns', 'mysa', 'token', 'CREATE'),
    err: '',
  },
  // Service accounts tests with token audience restrictions
  ...[
    [
      'allow create of token when audience in PSAT volume and ServiceAccountNodeAudienceRestriction is enabled, empty audience',
      'mysapod',
      ['foo'],
      '',
    ],
    [
      'allow create of token when audience in PSAT volume and ServiceAccountNodeAudienceRestriction is enabled, single audience',
      'mysapod',
      ['foo'],
      '',
    ],
    [
      'forbid create of token with multiple audiences in token request and ServiceAccountNodeAudienceRestriction is enabled',
      'mysapod',
      ['foo', 'bar'],
      'node may only request 0 or 1 audiences',
    ],
    [
      'forbid create of token when audience not in pod spec and ServiceAccountNodeAudienceRestriction is enabled',
      'mypod',
      ['foo'],
      'serviceaccounts "mysa" is forbidden: audience "foo" not found in pod spec volume',
    ],
    [
      'allow create of token when audience in pod --> csi --> driver --> tokenrequest with audience and ServiceAccountNodeAudienceRestriction is enabled',
      'mycsipod',
      ['foo'],
      '',
    ],
    [
      'forbid create of token when audience in pod --> csi --> driver --> tokenrequest does not have audience and ServiceAccountNodeAudienceRestriction is enabled',
      'mycsipod',
      ['bar'],
      'audience "bar" not found in pod spec volume',
    ],
    [
      'forbid create of token when audience in pod --> csi --> driver --> tokenrequest with audience and ServiceAccountNodeAudienceRestriction is enabled, csidriver not found',
      'mycsipod',
      ['foo'],
      'error validating audience "foo": csidriver.storage.k8s.io "com.example.csi.mydriver" not found',
    ],
    [
      'allow create of token when audience in pod --> pvc --> pv --> csi --> driver --> tokenrequest with audience and ServiceAccountNodeAudienceRestriction is enabled',
      'mypvcpod',
      ['foo'],
      '',
    ],
    [
      'forbid create of token when audience in pod --> pvc --> pv --> csi --> driver --> tokenrequest does not have audience and ServiceAccountNodeAudienceRestriction is enabled',
      'mypvcpod',
      ['bar'],
      'audience "bar" not found in pod spec volume',
    ],
    [
      'forbid create of token when audience in pod --> pvc --> pv --> csi --> driver --> tokenrequest with audience and ServiceAccountNodeAudienceRestriction is enabled, pvc not found',
      'mypvcpod',
      ['foo'],
      'error validating audience "foo": persistentvolumeclaim "pvclaim" not found',
    ],
    [
      'forbid create of token when audience in pod --> pvc --> pv --> csi --> driver --> tokenrequest with audience and ServiceAccountNodeAudienceRestriction is enabled, pv not found',
      'mypvcpod',
      ['foo'],
      'error validating audience "foo": persistentvolume "pvname" not found',
    ],
    [
      'allow create of token when audience in pod --> ephemeral --> pvc --> pv --> csi --> driver --> tokenrequest with audience and ServiceAccountNodeAudienceRestriction is enabled',
      'myephemeralpod',
      ['foo'],
      '',
    ],
    [
      'forbid create of token when audience in pod --> ephemeral --> pvc --> pv --> csi --> driver --> tokenrequest does not have audience and ServiceAccountNodeAudienceRestriction is enabled',
      'myephemeralpod',
      ['bar'],
      'audience "bar" not found in pod spec volume',
    ],
    [
      'allow create of token when ServiceAccountNodeAudienceRestriction is disabled, pvc not found should not be checked',
      'mypvcandcsipod',
      ['foo'],
      '',
    ],
    [
      'allow create of token when audience in pod --> csi --> driver --> tokenrequest with audience and ServiceAccountNodeAudienceRestriction is enabled, pv not found',
      'mypvcandcsipod',
      ['foo'],
      '',
    ],
    [
      'allow create of token when ServiceAccountNodeAudienceRestriction is disabled, pv not found should not be checked',
      'mypvcandcsipod',
      ['foo'],
      '',
    ],
    [
      'allow create of token when ServiceAccountNodeAudienceRestriction is disabled, csidriver not found should not be checked',
      'mycsipod',
      ['foo'],
      '',
    ],
    [
      'intree pv to csi, allow create of token when audience in pod --> csi --> driver --> tokenrequest with audience, ServiceAccountNodeAudienceRestriction=true',
      'myintreepvtocsipod',
      ['foo'],
      '',
    ],
    [
      'intree inline vol to csi, allow create of token when audience in pod --> csi --> driver --> tokenrequest with audience, ServiceAccountNodeAudienceRestriction=true',
      'myintreeinlinevoltocsipod',
      ['foo'],
      '',
    ],
  ].map(
    ([name, pod, audiences, err]): Case => ({
      name: name as string,
      input: rec(
        makeTokenRequest(pod as string, 'pod-uid', audiences as string[]),
        null,
        TOKEN as Target,
        'ns',
        'mysa',
        'token',
        'CREATE',
      ),
      err: err as string,
      ...((err as string).includes('not found') ? { differs: AUDIENCE_LOOKUP } : {}),
    }),
  ),

  // Unrelated objects
  {
    name: 'allow create of unrelated object',
    input: rec({ kind: 'ConfigMap', metadata: {} }, null, CONFIGMAP as Target, 'myns', 'mycm', '', 'CREATE'),
    err: '',
  },
  {
    name: 'allow update of unrelated object',
    input: rec(
      { kind: 'ConfigMap', metadata: {} },
      { kind: 'ConfigMap', metadata: {} },
      CONFIGMAP as Target,
      'myns',
      'mycm',
      '',
      'UPDATE',
    ),
    err: '',
  },
  {
    name: 'allow delete of unrelated object',
    input: rec(null, null, CONFIGMAP as Target, 'myns', 'mycm', '', 'DELETE'),
    err: '',
  },

  // Unrelated user
  {
    name: 'allow unrelated user creating a normal pod unbound',
    input: rec(unboundpod, null, POD, 'ns', 'unboundpod', '', 'CREATE', bob),
    err: '',
  },
  {
    name: 'allow unrelated user update of normal pod unbound',
    input: rec(unboundpod, unboundpod, POD, 'ns', 'unboundpod', '', 'UPDATE', bob),
    err: '',
  },
  {
    name: 'allow unrelated user delete of normal pod unbound',
    input: rec(null, unboundpod, POD, 'ns', 'unboundpod', '', 'DELETE', bob),
    err: '',
  },
  {
    name: 'allow unrelated user create of normal pod status unbound',
    input: rec(unboundpod, null, POD, 'ns', 'unboundpod', 'status', 'CREATE', bob),
    err: '',
  },
  {
    name: 'allow unrelated user update of normal pod status unbound',
    input: rec(unboundpod, unboundpod, POD, 'ns', 'unboundpod', 'status', 'UPDATE', bob),
    err: '',
  },
  {
    name: 'allow unrelated user delete of normal pod status unbound',
    input: rec(null, unboundpod, POD, 'ns', 'unboundpod', 'status', 'DELETE', bob),
    err: '',
  },

  // Node leases
  {
    name: 'disallowed create lease in namespace other than kube-node-lease - feature enabled',
    input: rec(leaseWrongNS, null, LEASE, 'foo', 'mynode', '', 'CREATE'),
    err: 'forbidden: ',
  },
  {
    name: 'disallowed update lease in namespace other than kube-node-lease - feature enabled',
    input: rec(leaseWrongNS, leaseWrongNS, LEASE, 'foo', 'mynode', '', 'UPDATE'),
    err: 'forbidden: ',
  },
  {
    name: 'disallowed delete lease in namespace other than kube-node-lease - feature enabled',
    input: rec(null, leaseWrongNS, LEASE, 'foo', 'mynode', '', 'DELETE'),
    err: 'forbidden: ',
  },
  {
    name: "disallowed create another node's lease - feature enabled",
    input: rec(leaseWrongName, null, LEASE, 'kube-node-lease', 'foo', '', 'CREATE'),
    err: 'forbidden: ',
  },
  {
    name: "disallowed update another node's lease - feature enabled",
    input: rec(leaseWrongName, leaseWrongName, LEASE, 'kube-node-lease', 'foo', '', 'UPDATE'),
    err: 'forbidden: ',
  },
  {
    name: "disallowed delete another node's lease - feature enabled",
    input: rec(null, leaseWrongName, LEASE, 'kube-node-lease', 'foo', '', 'DELETE'),
    err: 'forbidden: ',
  },
  {
    name: 'allowed create node lease - feature enabled',
    input: rec(theLease, null, LEASE, 'kube-node-lease', 'mynode', '', 'CREATE'),
    err: '',
  },
  {
    name: 'allowed update node lease - feature enabled',
    input: rec(theLease, theLease, LEASE, 'kube-node-lease', 'mynode', '', 'UPDATE'),
    err: '',
  },
  {
    name: 'allowed delete node lease - feature enabled',
    input: rec(null, theLease, LEASE, 'kube-node-lease', 'mynode', '', 'DELETE'),
    err: '',
  },

  // CSINode
  {
    name: "disallowed create another node's CSINode",
    input: rec(nodeInfoWrongName, null, CSINODE as Target, '', 'foo', '', 'CREATE'),
    err: 'forbidden: ',
  },
  {
    name: "disallowed update another node's CSINode",
    input: rec(nodeInfoWrongName, nodeInfoWrongName, CSINODE as Target, '', 'foo', '', 'UPDATE'),
    err: 'forbidden: ',
  },
  {
    name: "disallowed delete another node's CSINode",
    input: rec(null, nodeInfoWrongName, CSINODE as Target, '', 'foo', '', 'DELETE'),
    err: 'forbidden: ',
  },
  {
    name: 'allowed create node CSINode',
    input: rec(nodeInfo, null, CSINODE as Target, '', 'mynode', '', 'CREATE'),
    err: '',
  },
  {
    name: 'allowed update node CSINode',
    input: rec(nodeInfo, nodeInfo, CSINODE as Target, '', 'mynode', '', 'UPDATE'),
    err: '',
  },
  {
    name: 'allowed delete node CSINode',
    input: rec(null, nodeInfo, CSINODE as Target, '', 'mynode', '', 'DELETE'),
    err: '',
  },
];

// CSR cases need a real request, made lazily (key generation is slow at import time).
const csrCases: { name: string; make: () => Case }[] = [
  {
    name: 'allowed CSR create correct node serving',
    make: () => ({
      name: 'allowed CSR create correct node serving',
      input: rec(
        createCSR('system:node:mynode', 'kubernetes.io/kubelet-serving', true),
        null,
        CSR as Target,
        '',
        '',
        '',
        'CREATE',
      ),
      err: '',
    }),
  },
  {
    name: 'allowed CSR create correct node client',
    make: () => ({
      name: 'allowed CSR create correct node client',
      input: rec(
        createCSR('system:node:mynode', 'kubernetes.io/kube-apiserver-client-kubelet', true),
        null,
        CSR as Target,
        '',
        '',
        '',
        'CREATE',
      ),
      err: '',
    }),
  },
  {
    name: 'allowed CSR create non-node CSR',
    make: () => ({
      name: 'allowed CSR create non-node CSR',
      input: rec(
        createCSR('some-other-identity', 'kubernetes.io/kube-apiserver-client', true),
        null,
        CSR as Target,
        '',
        '',
        '',
        'CREATE',
      ),
      err: '',
    }),
  },
  {
    name: 'deny CSR create incorrect node',
    make: () => ({
      name: 'deny CSR create incorrect node',
      input: rec(
        createCSR('system:node:othernode', 'kubernetes.io/kubelet-serving', true),
        null,
        CSR as Target,
        '',
        '',
        '',
        'CREATE',
      ),
      err: 'forbidden: can only create a node CSR with CN=system:node:mynode',
    }),
  },
  {
    name: 'allow CSR create incorrect node with feature gate disabled',
    make: () => ({
      name: 'allow CSR create incorrect node with feature gate disabled',
      input: rec(
        createCSR('system:node:othernode', 'kubernetes.io/kubelet-serving', true),
        null,
        CSR as Target,
        '',
        '',
        '',
        'CREATE',
      ),
      err: '',
      config: configure({ featureGates: { AllowInsecureKubeletCertificateSigningRequests: true } }),
    }),
  },
  {
    name: 'deny CSR create invalid',
    make: () => ({
      name: 'deny CSR create invalid',
      input: rec(
        createCSR('system:node:mynode', 'kubernetes.io/kubelet-serving', false),
        null,
        CSR as Target,
        '',
        '',
        '',
        'CREATE',
      ),
      err: 'unable to parse csr: asn1: syntax error: sequence truncated',
    }),
  },
];

describe('Test_nodePlugin_Admit', () => {
  it.each(admitCases)('$name', async (c) => expectOutcome(c));
  it.each(csrCases)('$name', async ({ make }) => expectOutcome(make()));

  it('prints the full message admission.NewForbidden prints', async () => {
    expect(
      await decide({ input: rec(othernodeObj, othernodeObj, NODE as Target, '', 'othernode', '', 'UPDATE') }),
    ).toBe('nodes "othernode" is forbidden: node "mynode" is not allowed to modify node "othernode"');
    expect(await decide({ input: rec(mypod, mypod, POD, 'ns', 'mypod', '', 'UPDATE') })).toBe(
      'pods "mypod" is forbidden: unexpected operation "UPDATE", node "mynode" can only create and delete mirror pods',
    );
    expect(await decide({ input: rec(mypodEviction, null, EVICTION, 'ns', 'mypod', 'eviction', 'UPDATE') })).toBe(
      'pods "mypod" is forbidden: unexpected operation UPDATE',
    );
    expect(await decide({ input: rec(leaseWrongNS, null, LEASE, 'foo', 'mynode', '', 'CREATE') })).toBe(
      'leases.coordination.k8s.io "mynode" is forbidden: can only access leases in the "kube-node-lease" system namespace',
    );
    const result = await runPhase(plugin, 'validate', rec(mypod, null, POD, 'ns', 'mypod', '', 'CREATE'), DEFAULTS);
    expect(result.wire.response!.status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      status: 'Failure',
      message:
        'pods "mypod" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "mynode" can only create mirror pods',
    });
  });

  it('a node user without a node name is refused everywhere it is looked at', async () => {
    const nameless = { username: 'system:node:', groups: ['system:nodes'] };
    expect(await decide({ input: rec(mymirrorpod, null, POD, 'ns', 'mymirrorpod', '', 'CREATE', nameless) })).toBe(
      'pods "mymirrorpod" is forbidden: could not determine node from user "system:node:"',
    );
  });

  it('a node name outside the system:nodes group is not a node', async () => {
    expect(
      await decide({
        input: rec(otherpod, null, POD, 'ns', 'otherpod', '', 'CREATE', {
          username: 'system:node:mynode',
          groups: ['system:authenticated'],
        }),
      }),
    ).toBeUndefined();
  });

  it('other pod subresources are refused', async () => {
    expect(await decide({ input: rec(mypod, mypod, POD, 'ns', 'mypod', 'ephemeralcontainers', 'UPDATE') })).toBe(
      `pods "mypod" is forbidden: unexpected pod subresource "ephemeralcontainers", only 'status' and 'eviction' are allowed`,
    );
  });

  it('mirror pods may reference no secret, configmap or PVC in any form', async () => {
    const base = makeTestPod('ns', 'm', 'mynode', true);
    const cases: [Record<string, unknown>, string][] = [
      [{ imagePullSecrets: [{ name: 'x' }] }, 'reference secrets'],
      [{ containers: [{ name: 'c', envFrom: [{ secretRef: { name: 's' } }] }] }, 'reference secrets'],
      [
        {
          ephemeralContainers: [
            { name: 'c', env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] },
          ],
        },
        'reference secrets',
      ],
      [{ volumes: [{ name: 'v', csi: { driver: 'd', nodePublishSecretRef: { name: 's' } } }] }, 'reference secrets'],
      [{ volumes: [{ name: 'v', projected: { sources: [{ secret: { name: 's' } }] } }] }, 'reference secrets'],
      [
        {
          initContainers: [
            { name: 'c', env: [{ name: 'E', valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } }] },
          ],
        },
        'reference configmaps',
      ],
      [{ volumes: [{ name: 'v', projected: { sources: [{ configMap: { name: 'c' } }] } }] }, 'reference configmaps'],
    ];
    for (const [spec, err] of cases)
      expect(await decide({ input: rec(withSpec(base, spec), null, POD, 'ns', 'm', '', 'CREATE') })).toContain(err);
    // A CSI volume without a secret and an azureFile without a secret name reference nothing.
    const harmless = withSpec(base, {
      volumes: [
        { name: 'a', csi: { driver: 'd' } },
        { name: 'b', azureFile: { shareName: 's' } },
        { name: 'e', emptyDir: {} },
      ],
    });
    expect(await decide({ input: rec(harmless, null, POD, 'ns', 'm', '', 'CREATE') })).toBeUndefined();
  });
});

describe('current upstream: a node may not change its ownerReferences', () => {
  const owned: KubeObject = {
    ...mynodeObj,
    metadata: { ...mynodeObj.metadata, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'other', uid: 'x' }] },
  };
  it('forbid update of my node: add ownerReferences', async () => {
    expect(await decide({ input: rec(owned, mynodeObj, NODE as Target, '', 'mynode', '', 'UPDATE') })).toBe(
      'nodes "mynode" is forbidden: node "mynode" is not allowed to modify ownerReferences',
    );
  });
  it('forbid update of my node status: remove ownerReferences', async () => {
    expect(await decide({ input: rec(mynodeObj, owned, NODE as Target, '', 'mynode', 'status', 'UPDATE') })).toContain(
      'is not allowed to modify ownerReferences',
    );
  });
  it('allow update of my node: ownerReferences unchanged', async () => {
    expect(await decide({ input: rec(owned, owned, NODE as Target, '', 'mynode', '', 'UPDATE') })).toBeUndefined();
  });
});

describe('Test_nodePlugin_Admit_OwnerReference', () => {
  const validOwner = { apiVersion: 'v1', kind: 'Node', name: 'mynode', uid: 'mynode-uid', controller: true };
  const cases: { name: string; owners: unknown[] | undefined; expectErr: string; empty?: true }[] = [
    {
      name: 'no owner',
      owners: undefined,
      expectErr: 'pods "test" is forbidden: node "mynode" can only create pods with an owner reference set to itself',
    },
    { name: 'valid owner', owners: [validOwner], expectErr: '' },
    {
      name: 'duplicate owner',
      owners: [validOwner, validOwner],
      expectErr: 'can only create pods with a single owner reference set to itself',
    },
    {
      name: 'invalid name',
      owners: [{ ...validOwner, name: 'other' }],
      expectErr: 'can only create pods with an owner reference set to itself',
    },
    { name: 'invalid UID', owners: [{ ...validOwner, uid: 'mynode-unexpected-uid' }], expectErr: 'UID mismatch' },
    { name: 'node not found', owners: [validOwner], expectErr: 'not found', empty: true },
    {
      name: 'invalid API version',
      owners: [{ ...validOwner, apiVersion: 'v2' }],
      expectErr: 'can only create pods with an owner reference set to itself',
    },
    {
      name: 'invalid kind',
      owners: [{ ...validOwner, kind: 'Pod' }],
      expectErr: 'can only create pods with an owner reference set to itself',
    },
    {
      name: 'nil controller',
      owners: [{ ...validOwner, controller: undefined }],
      expectErr: 'can only create pods with a controller owner reference set to itself',
    },
    {
      name: 'false controller',
      owners: [{ ...validOwner, controller: false }],
      expectErr: 'can only create pods with a controller owner reference set to itself',
    },
    {
      name: 'invalid blockOwnerDeletion',
      owners: [{ ...validOwner, blockOwnerDeletion: true }],
      expectErr: 'must not set blockOwnerDeletion on an owner reference',
    },
  ];
  it.each(cases)('$name', async ({ owners, expectErr, empty }) => {
    const pod = makeTestPod('ns', 'test', 'mynode', true);
    pod.metadata!.ownerReferences = owners;
    await expectOutcome({
      name: '',
      input: rec(pod, null, POD, 'ns', 'test', '', 'CREATE'),
      err: expectErr,
      ...(empty && { empty }),
    });
  });
});

describe('Test_getModifiedLabels', () => {
  it.each([
    { name: 'empty', a: undefined, b: undefined, want: [] },
    { name: 'no change', a: { x: '1', y: '2', z: '3' }, b: { x: '1', y: '2', z: '3' }, want: [] },
    { name: 'added', a: {}, b: { a: '0' }, want: ['a'] },
    { name: 'removed', a: { z: '3' }, b: {}, want: ['z'] },
    { name: 'changed', a: { z: '3' }, b: { z: '4' }, want: ['z'] },
    { name: 'added empty', a: {}, b: { a: '' }, want: ['a'] },
    { name: 'removed empty', a: { z: '' }, b: {}, want: ['z'] },
    { name: 'changed to empty', a: { z: '3' }, b: { z: '' }, want: ['z'] },
    { name: 'changed from empty', a: { z: '' }, b: { z: '3' }, want: ['z'] },
    { name: 'added, removed, and changed', a: { a: '1', b: '2' }, b: { a: '2', c: '3' }, want: ['a', 'b', 'c'] },
  ])('$name', ({ a, b, want }) => {
    expect([...modifiedLabels(a, b)].sort()).toEqual(want);
  });
});

describe('TestAdmitPVCStatus', () => {
  function makeTestPVC(condition: string, allocatedResources: string, resizeStatus?: string): KubeObject {
    const status: Record<string, unknown> = {
      capacity: { storage: allocatedResources },
      phase: 'Bound',
      allocatedResources: { storage: allocatedResources },
    };
    if (resizeStatus !== undefined) status.allocatedResourceStatuses = { storage: resizeStatus };
    if (condition !== '') status.conditions = [{ type: condition, status: 'True' }];
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {},
      spec: { volumeName: 'volume1', resources: { requests: { storage: '10G' } } },
      status,
    };
  }
  const PVCS = { kind: { kind: 'PersistentVolumeClaim' }, resource: { resource: 'persistentvolumeclaims' } } as Target;
  it.each([
    {
      name: 'should not allow full pvc update from nodes',
      oldObj: makeTestPVC('Resizing', '10G'),
      subresource: '',
      newObj: makeTestPVC('', '10G'),
      recovery: false,
      expectError: 'is forbidden: may only update PVC status',
    },
    {
      name: 'should allow capacity and condition updates, if expansion is enabled',
      oldObj: makeTestPVC('Resizing', '10G'),
      subresource: 'status',
      newObj: makeTestPVC('FileSystemResizePending', '10G'),
      recovery: false,
      expectError: '',
    },
    {
      name: 'should not allow updates to allocatedResources with just expansion enabled',
      oldObj: makeTestPVC('Resizing', '10G'),
      subresource: 'status',
      newObj: makeTestPVC('FileSystemResizePending', '15G'),
      recovery: false,
      expectError: 'is not allowed to update fields other than',
    },
    {
      name: 'should allow updates to allocatedResources with expansion and recovery enabled',
      oldObj: makeTestPVC('Resizing', '10G'),
      subresource: 'status',
      newObj: makeTestPVC('FileSystemResizePending', '15G'),
      recovery: true,
      expectError: '',
    },
    {
      name: 'should allow updates to resizeStatus with expansion and recovery enabled',
      oldObj: makeTestPVC('Resizing', '10G'),
      subresource: 'status',
      newObj: makeTestPVC('Resizing', '10G', 'NodeResizeInfeasible'),
      recovery: true,
      expectError: '',
    },
  ])('$name', async ({ oldObj, newObj, subresource, recovery, expectError }) => {
    const config = configure({ featureGates: { RecoverVolumeExpansionFailure: recovery } });
    await expectOutcome({
      name: '',
      input: rec(newObj, oldObj, PVCS, 'default', 'foo', subresource, 'UPDATE'),
      err: expectError,
      config,
    });
  });

  it('names the fields a node changed, in place of cmp.Diff', async () => {
    const before = makeTestPVC('', '10G');
    const after = { ...before, metadata: { labels: { stolen: 'yes' } } };
    expect(await decide({ input: rec(after, before, PVCS, 'default', 'foo', 'status', 'UPDATE') })).toBe(
      'persistentvolumeclaims "foo" is forbidden: node "mynode" is not allowed to update fields other than status.quantity and status.conditions: changed metadata.labels',
    );
  });
});

describe('TestAdmitResourceSlice', () => {
  const createErr = 'can only create ResourceSlice with the same NodeName as the requesting node';
  const deleteErr = 'can only delete ResourceSlice with the same NodeName as the requesting node';
  const slice = (nodeName: string): KubeObject => ({
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceSlice',
    metadata: { name: 'something' },
    spec: { nodeName },
  });
  const SLICES = {
    kind: { group: 'resource.k8s.io', kind: 'ResourceSlice' },
    resource: { group: 'resource.k8s.io', resource: 'resourceslices' },
  } as Target;
  const [sliceNode, sliceOtherNode, sliceNoNode] = [slice('mynode'), slice('mynode-other'), slice('')];
  // featureEnabled (DynamicResourceAllocation) does not change the answer upstream; both kept for parity.
  it.each([
    { name: 'create allowed, enabled', op: 'CREATE', obj: sliceNode, err: '' },
    { name: 'create disallowed, enabled', op: 'CREATE', obj: sliceOtherNode, err: createErr },
    { name: 'create disallowed, no node name, enabled', op: 'CREATE', obj: sliceNoNode, err: createErr },
    { name: 'create allowed, disabled', op: 'CREATE', obj: sliceNode, err: '' },
    { name: 'create disallowed, disabled', op: 'CREATE', obj: sliceOtherNode, err: createErr },
    { name: 'create disallowed, no node name, disabled', op: 'CREATE', obj: sliceNoNode, err: createErr },
    { name: 'update allowed, same node', op: 'UPDATE', obj: sliceNode, err: '' },
    { name: 'update allowed, other node', op: 'UPDATE', obj: sliceOtherNode, err: '' },
    { name: 'update allowed, no node', op: 'UPDATE', obj: sliceNoNode, err: '' },
    { name: 'delete allowed, enabled', op: 'DELETE', old: sliceNode, err: '' },
    { name: 'delete disallowed, enabled', op: 'DELETE', old: sliceOtherNode, err: deleteErr },
    { name: 'delete disallowed, no node name, enabled', op: 'DELETE', old: sliceNoNode, err: deleteErr },
    { name: 'delete allowed, disabled', op: 'DELETE', old: sliceNode, err: '' },
    { name: 'delete disallowed, disabled', op: 'DELETE', old: sliceOtherNode, err: deleteErr },
    { name: 'delete disallowed, no node name, disabled', op: 'DELETE', old: sliceNoNode, err: deleteErr },
  ] as { name: string; op: Operation; obj?: KubeObject; old?: KubeObject; err: string }[])(
    '$name',
    async ({ op, obj, old, err }) => {
      await expectOutcome({ name: '', input: rec(obj ?? null, old ?? null, SLICES, '', 'foo', '', op), err });
    },
  );
});

describe('other resources and subresources are ignored', () => {
  it.each([
    { name: 'configmaps', target: { kind: { kind: 'ConfigMap' }, resource: { resource: 'configmaps' } } },
    { name: 'secrets', target: { kind: { kind: 'Secret' }, resource: { resource: 'secrets' } } },
    {
      name: 'pods of another group',
      target: { kind: { group: 'example.com', kind: 'Pod' }, resource: { group: 'example.com', resource: 'pods' } },
    },
    {
      name: 'leases of another group',
      target: { kind: { group: 'example.com', kind: 'Lease' }, resource: { group: 'example.com', resource: 'leases' } },
    },
  ])('$name written by a node are allowed', async ({ target }) => {
    expect(
      await decide({ input: rec(otherpod, null, target as Target, 'ns', 'otherpod', '', 'CREATE') }),
    ).toBeUndefined();
  });

  it('service account writes other than token requests are allowed', async () => {
    const sa: KubeObject = { kind: 'ServiceAccount', metadata: { name: 'mysa' } };
    expect(await decide({ input: rec(sa, null, TOKEN as Target, 'ns', 'mysa', '', 'CREATE') })).toBeUndefined();
  });

  it('emits rules for what it checks (Leases only by hand: webhooks stay off Leases), and sees every namespace', () => {
    const rules = plugin.metadata.validating!.rules;
    const resources = rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.map((res) => `${g}/${res}`))).sort();
    expect(resources).toEqual([
      '/nodes',
      '/nodes/*',
      '/persistentvolumeclaims',
      '/persistentvolumeclaims/*',
      '/pods',
      '/pods/*',
      '/serviceaccounts/token',
      'certificates.k8s.io/certificatesigningrequests',
      'resource.k8s.io/resourceslices',
      'storage.k8s.io/csinodes',
    ]);
    expect(rules.every((r) => !r.operations.includes('CONNECT'))).toBe(true);
    // It learns placements from the pod and Node writes those rules already send.
    expect(plugin.metadata).toMatchObject({
      systemNamespaces: 'include',
      writes: false,
      needs: ['placements'],
      validating: { failurePolicy: 'Fail', timeoutSeconds: 3 },
    });
    expect(plugin.metadata.mutating).toBeUndefined();
  });
});

describe('handles these operations', () => {
  it.each([
    { operation: 'CREATE' as const, handled: true },
    { operation: 'UPDATE' as const, handled: true },
    { operation: 'DELETE' as const, handled: true },
    { operation: 'CONNECT' as const, handled: false },
  ])('$operation on another node is refused: $handled', async ({ operation, handled }) => {
    const message = await decide({
      input: rec(
        operation === 'DELETE' ? null : othernodeObj,
        operation === 'CREATE' ? null : othernodeObj,
        NODE as Target,
        '',
        'othernode',
        '',
        operation,
      ),
    });
    if (handled) expect(message).toContain('is not allowed to modify node "othernode"');
    else expect(message).toBeUndefined();
  });

  it('answers a v1beta1 review in kind, with the same uid', async () => {
    const result = await runPhase(
      plugin,
      'validate',
      {
        ...rec(mypod, null, POD, 'ns', 'mypod', '', 'CREATE'),
        apiVersion: 'admission.k8s.io/v1beta1',
        uid: 'beta-uid',
      },
      DEFAULTS,
    );
    expect(result.wire.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(result.wire.response).toMatchObject({
      uid: 'beta-uid',
      allowed: false,
      status: { code: 403, reason: 'Forbidden' },
    });
  });
});

describe('configuration', () => {
  it('defaults to the feature gates of current Kubernetes', () => {
    expect(DEFAULTS.featureGates).toEqual({
      AllowInsecureKubeletCertificateSigningRequests: false,
      RecoverVolumeExpansionFailure: true,
      ServiceAccountNodeAudienceRestriction: true,
    });
  });

  it('ServiceAccountNodeAudienceRestriction off allows several audiences', async () => {
    const config = configure({ featureGates: { ServiceAccountNodeAudienceRestriction: false } });
    expect(
      await decide({
        input: rec(
          makeTokenRequest('mypod', 'pod-uid', ['a', 'b']),
          null,
          TOKEN as Target,
          'ns',
          'mysa',
          'token',
          'CREATE',
        ),
        config,
      }),
    ).toBeUndefined();
  });

  it.each([
    { raw: 'yes', field: 'configuration' },
    { raw: { featureGate: {} }, field: 'featureGate' },
    { raw: { featureGates: [] }, field: 'featureGates' },
    { raw: { featureGates: { NoSuchGate: true } }, field: 'featureGates.NoSuchGate' },
    {
      raw: { featureGates: { RecoverVolumeExpansionFailure: 'true' } },
      field: 'featureGates.RecoverVolumeExpansionFailure',
    },
  ])('rejects $raw naming $field', ({ raw, field }) => {
    const error = configErrorOf(() => configure(raw));
    expect(error).toMatchObject({ plugin: 'NodeRestriction', field });
  });
});

describe('what the webhook learns, through the real handler and store', () => {
  // Each test teaches its own pods (names of its own) into one table, through the deployed handler.
  let store: TestStore;
  let invoke: ReturnType<typeof lambdaFor>;
  beforeAll(async () => {
    store = await testStore('node-restriction-learning');
    invoke = lambdaFor(plugin, store, DEFAULTS);
    await send(mynodeStatus);
  });
  afterAll(() => store.close());

  /**
   * A request as the apiserver sends it: to the judge, then to the learning webhook (which answers
   * every request it is sent with a bare admission, and ignores those its rules do not send it).
   * The judge's answer is returned.
   */
  async function send(input: ReviewInput) {
    const result = await invoke('validate', input);
    expect(result.statusCode).toBe(200);
    const learning = await invoke('learn', input);
    expect(learning.statusCode).toBe(200);
    expect(learning.review!.response).toEqual({ uid: expect.any(String), allowed: true });
    return result.review!.response!;
  }
  const evict = (name: string) =>
    send(rec(makeTestPodEviction(name), null, EVICTION, 'ns', name, 'eviction', 'CREATE'));
  const pod = (name: string, node: string, uid = `${name}-uid`): KubeObject => ({
    ...makeTestPod('ns', name, node, false),
    metadata: { namespace: 'ns', name, uid },
  });
  const podStatus = (p: KubeObject, by = mynode) => rec(p, p, POD, 'ns', p.metadata!.name!, 'status', 'UPDATE', by);
  const token = (name: string, uid: string) =>
    send(rec(makeTokenRequest(name, uid, []), null, TOKEN as Target, 'ns', 'mysa', 'token', 'CREATE'));

  it('a pod never seen cannot be evicted (NotFound, 404); once its kubelet reports status it can', async () => {
    expect(await evict('late')).toMatchObject({
      allowed: false,
      status: {
        code: 404,
        reason: 'NotFound',
        message: 'pods "late" not found',
        details: { name: 'late', kind: 'pods' },
      },
    });
    await send(podStatus(pod('late', 'mynode')));
    expect((await evict('late')).allowed).toBe(true);
  });

  it("the scheduler's Binding places a pod learned unbound; a second Binding moves nothing", async () => {
    await send(rec(pod('sched', ''), null, POD, 'ns', 'sched', '', 'CREATE', bob));
    expect((await evict('sched')).status?.message).toContain('can only evict pods with spec.nodeName set to itself');
    const bind = (node: string) =>
      send(
        rec(
          binding(pod('sched', ''), node),
          null,
          { kind: { kind: 'Binding' }, resource: { resource: 'pods' } } as Target,
          'ns',
          'sched',
          'binding',
          'CREATE',
          scheduler,
        ),
      );
    await bind('mynode');
    expect((await evict('sched')).allowed).toBe(true);
    // The apiserver refuses to re-bind a bound pod; so does what we learn.
    await bind('othernode');
    expect((await evict('sched')).allowed).toBe(true);
  });

  it('a failed create (AlreadyExists) never replaces a pod confirmed by a stored object', async () => {
    await send(podStatus(pod('kept', 'mynode')));
    // Another client's CREATE of the same name: the apiserver will refuse it, after admission.
    await send(rec(pod('kept', 'othernode', 'impostor-uid'), null, POD, 'ns', 'kept', '', 'CREATE', bob));
    expect((await evict('kept')).allowed).toBe(true);
    expect((await token('kept', 'kept-uid')).allowed).toBe(true);
  });

  it("a node's own pod create claims nothing: a mirror pod cannot take a pending pod's name to evict it", async () => {
    await send(rec(pod('pending', ''), null, POD, 'ns', 'pending', '', 'CREATE', bob));
    const mirrorNamed = (name: string): KubeObject => ({
      ...makeTestPod('ns', name, 'mynode', true),
      metadata: { ...makeTestPod('ns', name, 'mynode', true).metadata, uid: 'forged-uid' },
    });
    // NodeRestriction admits the mirror pod; the apiserver then answers AlreadyExists.
    expect((await send(rec(mirrorNamed('pending'), null, POD, 'ns', 'pending', '', 'CREATE'))).allowed).toBe(true);
    expect((await evict('pending')).status?.message).toContain('can only evict pods with spec.nodeName set to itself');
    expect((await send(rec(mirrorNamed('unclaimed'), null, POD, 'ns', 'unclaimed', '', 'CREATE'))).allowed).toBe(true);
    expect((await evict('unclaimed')).status?.code).toBe(404);
  });

  it('a deleted incarnation does not come back: neither a finalizer removal nor a late status update revives it', async () => {
    const fin = pod('fin', 'mynode');
    await send(podStatus(fin));
    expect((await send(rec(null, fin, POD, 'ns', 'fin', '', 'DELETE', bob))).allowed).toBe(true);
    const terminating: KubeObject = {
      ...fin,
      metadata: { ...fin.metadata, deletionTimestamp: '2026-11-22T05:00:00Z', finalizers: ['example.com/cleanup'] },
    };
    await send(
      rec(
        { ...terminating, metadata: { ...terminating.metadata, finalizers: [] } },
        terminating,
        POD,
        'ns',
        'fin',
        '',
        'UPDATE',
        bob,
      ),
    );
    await send(podStatus(terminating));
    expect((await evict('fin')).status?.code).toBe(404);
    // A new incarnation under the same name is learned as usual.
    await send(podStatus(pod('fin', 'mynode', 'fin-uid-2')));
    expect((await evict('fin')).allowed).toBe(true);
  });

  it("a new incarnation's Binding replaces the record of an old one whose deletion was missed", async () => {
    await send(podStatus(pod('web-0', 'mynode', 'web-0-old')));
    // The old pod's deletion was not seen (the learning webhook was down); the new one's create
    // cannot claim a name with a live record, but its Binding names its own uid.
    await send(rec(pod('web-0', '', 'web-0-new'), null, POD, 'ns', 'web-0', '', 'CREATE', bob));
    expect((await evict('web-0')).allowed).toBe(true);
    await send(
      rec(
        binding(pod('web-0', '', 'web-0-new'), 'othernode'),
        null,
        { kind: { kind: 'Binding' }, resource: { resource: 'pods' } } as Target,
        'ns',
        'web-0',
        'binding',
        'CREATE',
        scheduler,
      ),
    );
    expect((await evict('web-0')).status?.message).toContain('can only evict pods with spec.nodeName set to itself');
    expect((await token('web-0', 'web-0-old')).status?.message).toContain('does not match the UID in record');
  });

  it("a store failure while learning loses the observation, not the kubelet's write; a lookup still fails closed", async () => {
    const down = createStatefulAdmissionHandler(plugin, {
      config: DEFAULTS,
      callerAuth: { mode: 'mtls', allowedSubjects: [] },
      state: (request) =>
        createRequestState(request, {
          plugin: plugin.metadata.name,
          client: localDynamoDb('http://127.0.0.1:9', { maxAttempts: 1 }),
          tableName: store.tableName,
        }),
    });
    const lines: string[] = [];
    setLogSink((line) => lines.push(line));
    try {
      const status = await down(
        gatewayEvent('/node-restriction/learn', JSON.stringify(review(podStatus(pod('unlucky', 'mynode'))))),
        lambdaContext,
      );
      expect(status.statusCode).toBe(200);
      expect(JSON.parse(status.body).response.allowed).toBe(true);
      expect(JSON.parse(lines.at(-1)!)).toMatchObject({
        level: 'warn',
        learningLost: expect.stringContaining('state store'),
      });
      const eviction = await down(
        gatewayEvent(
          '/node-restriction/validate',
          JSON.stringify(
            review(rec(makeTestPodEviction('unlucky'), null, EVICTION, 'ns', 'unlucky', 'eviction', 'CREATE')),
          ),
        ),
        lambdaContext,
      );
      expect(eviction.statusCode).toBe(500);
    } finally {
      setLogSink(undefined);
    }
  });

  it('a deleted pod is forgotten; a refused DELETE forgets nothing', async () => {
    const gone = pod('gone', 'mynode');
    await send(podStatus(gone));
    // othernode may not delete it: refused, and the pod stays known.
    expect(
      (
        await send(
          rec(null, gone, POD, 'ns', 'gone', '', 'DELETE', {
            username: 'system:node:othernode',
            groups: ['system:nodes'],
          }),
        )
      ).allowed,
    ).toBe(false);
    expect((await evict('gone')).allowed).toBe(true);
    expect((await send(rec(null, gone, POD, 'ns', 'gone', '', 'DELETE'))).allowed).toBe(true);
    expect((await evict('gone')).status).toMatchObject({ code: 404, message: 'pods "gone" not found' });
    // A DELETE without the stored pod reads what was learned.
    expect((await send(rec(null, null, POD, 'ns', 'gone', '', 'DELETE'))).status?.code).toBe(404);
    // The tombstone expires after a day (TTL), so churning pods do not grow the table for ever.
    const { Item } = await store.client.call('GetItem', {
      TableName: store.tableName,
      Key: { pk: { S: 'pod#ns/gone' }, sk: { S: 'placement' } },
    });
    const expiresIn = Number(Item?.expiresAt?.N) - Date.now() / 1000;
    expect(expiresIn).toBeGreaterThan(86_400 - 60);
    expect(expiresIn).toBeLessThanOrEqual(86_400);
  });

  it("token requests check the learned pod's uid and node with upstream's messages; an unlearned pod is allowed", async () => {
    await send(podStatus(pod('tok', 'mynode')));
    expect((await token('tok', 'tok-uid')).allowed).toBe(true);
    expect((await token('tok', 'old-uid')).status?.message).toBe(
      'serviceaccounts "mysa" is forbidden: the UID in the bound object reference (old-uid) does not match the UID in record. The object might have been deleted and then recreated',
    );
    await send(
      podStatus(pod('elsewhere', 'othernode'), { username: 'system:node:othernode', groups: ['system:nodes'] }),
    );
    expect((await token('elsewhere', 'elsewhere-uid')).status?.message).toBe(
      'serviceaccounts "mysa" is forbidden: node requested token bound to a pod scheduled on a different node',
    );
    expect((await token('never-seen', 'x')).allowed).toBe(true);
  });

  it("mirror pods are checked against the Node's learned UID, which a kubelet restart's failed CREATE does not replace", async () => {
    const mirror = (uid: string): KubeObject => {
      const staticPod = makeTestPod('ns', 'static', 'mynode', true);
      staticPod.metadata!.ownerReferences = [{ apiVersion: 'v1', kind: 'Node', name: 'mynode', uid, controller: true }];
      return staticPod;
    };
    expect((await send(rec(mirror('mynode-uid'), null, POD, 'ns', 'static', '', 'CREATE'))).allowed).toBe(true);
    // The kubelet restarts and re-registers: its CREATE carries a fresh uid the apiserver will refuse.
    await send(
      rec(
        { ...mynodeObj, metadata: { name: 'mynode', uid: 'fresh-uid' } },
        null,
        NODE as Target,
        '',
        'mynode',
        '',
        'CREATE',
      ),
    );
    expect((await send(rec(mirror('mynode-uid'), null, POD, 'ns', 'static', '', 'CREATE'))).allowed).toBe(true);
    expect((await send(rec(mirror('fresh-uid'), null, POD, 'ns', 'static', '', 'CREATE'))).status?.message).toBe(
      'pods "static" is forbidden: node mynode UID mismatch: expected fresh-uid got mynode-uid',
    );
  });

  it('a dry run learns nothing and writes nothing', async () => {
    store.reset();
    await send({ ...podStatus(pod('dry', 'mynode')), dryRun: true });
    await send({ ...rec(pod('dry2', 'mynode'), null, POD, 'ns', 'dry2', '', 'CREATE', bob), dryRun: true });
    expect(store.writes()).toBe(0);
    expect((await evict('dry')).status?.code).toBe(404);
  });

  it('a v1beta1 review learns and is answered in v1beta1', async () => {
    await send({ ...podStatus(pod('beta', 'mynode')), apiVersion: 'admission.k8s.io/v1beta1' });
    const result = await invoke('validate', {
      ...rec(makeTestPodEviction('beta'), null, EVICTION, 'ns', 'beta', 'eviction', 'CREATE'),
      apiVersion: 'admission.k8s.io/v1beta1',
    });
    expect(result.review).toMatchObject({ apiVersion: 'admission.k8s.io/v1beta1', response: { allowed: true } });
  });
});
