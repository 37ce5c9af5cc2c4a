// The generated merge schema (lib/kube/merge-schema.generated.ts) against what upstream's types
// declare: each fact is a marker in k8s.io/api's types.go (`+listType=map`, `+listMapKey=...`,
// `+listType=set`, `+listType=atomic`, `+mapType=atomic`, `+structType=atomic`, `+default=...`)
// and is checked the way the MutatingAdmissionPolicy plugin uses it, through the merge and the
// atomic check, so a wrong or missing entry shows up as a wrong merge.
import { describe, expect, it } from 'vitest';
import { MERGE_SCHEMA, formatMergeSchema, parseMergeSchema } from '../../lib/kube/merge-schema.js';
import { MERGE_SCHEMA_SOURCE, MERGE_SCHEMA_TEXT } from '../../lib/kube/merge-schema.generated.js';
import { findAtomics, merge, typeOfKind } from '../../lib/kube/structured-merge.js';

type Json = Record<string, unknown>;

const applied = (apiVersion: string, kind: string, live: Json, patch: Json): Json =>
  merge(MERGE_SCHEMA, { apiVersion, kind, ...live }, patch, typeOfKind(MERGE_SCHEMA, apiVersion, kind)) as Json;
const atomicsIn = (apiVersion: string, kind: string, patch: Json): string[] =>
  findAtomics(MERGE_SCHEMA, patch, typeOfKind(MERGE_SCHEMA, apiVersion, kind));
const pod = (spec: Json): Json => ({ spec });

describe('the generated merge schema agrees with k8s.io/api (core/v1, networking/v1, ...)', () => {
  it('names its source: Debian golang-k8s-client-go-dev, a Kubernetes 1.36 client-go (0.36.x)', () => {
    expect(MERGE_SCHEMA_SOURCE).toMatch(/^golang-k8s-client-go-dev 0\.36\.\d+-\d+$/);
  });

  it('PodSpec.containers: +listType=map +listMapKey=name; new entries after the live ones', () => {
    const live = pod({
      containers: [
        { name: 'app', image: 'a:1' },
        { name: 'log', image: 'l:1' },
      ],
    });
    const out = applied(
      'v1',
      'Pod',
      live,
      pod({
        containers: [
          { name: 'side', image: 's:1' },
          { name: 'app', tty: true },
        ],
      }),
    );
    expect((out.spec as Json).containers).toEqual([
      { name: 'app', image: 'a:1', tty: true },
      { name: 'log', image: 'l:1' },
      { name: 'side', image: 's:1' },
    ]);
  });

  it('Container.ports: +listMapKey=containerPort +listMapKey=protocol, protocol +default="TCP"', () => {
    const ports = [
      { containerPort: 80, name: 'http' },
      { containerPort: 53, protocol: 'UDP' },
    ];
    const patch = [
      { containerPort: 80, protocol: 'TCP', hostPort: 8080 },
      { containerPort: 53, protocol: 'TCP' },
    ];
    const out = applied(
      'v1',
      'Pod',
      pod({ containers: [{ name: 'c', ports }] }),
      pod({ containers: [{ name: 'c', ports: patch }] }),
    );
    expect(((out.spec as Json).containers as Json[])[0].ports).toEqual([
      { containerPort: 80, name: 'http', hostPort: 8080, protocol: 'TCP' },
      { containerPort: 53, protocol: 'UDP' },
      { containerPort: 53, protocol: 'TCP' },
    ]);
  });

  it('PodSpec.tolerations: +listType=atomic, replaced whole and refused in an apply configuration', () => {
    const live = pod({ tolerations: [{ key: 'a', operator: 'Exists' }] });
    const tolerations = [{ key: 'b', operator: 'Exists' }];
    expect((applied('v1', 'Pod', live, pod({ tolerations })).spec as Json).tolerations).toEqual(tolerations);
    expect(atomicsIn('v1', 'Pod', pod({ tolerations }))).toEqual(['.spec.tolerations']);
  });

  it('PodSpec.nodeSelector: +mapType=atomic, replaced whole and refused', () => {
    const live = pod({ nodeSelector: { zone: 'a', disk: 'ssd' } });
    expect((applied('v1', 'Pod', live, pod({ nodeSelector: { zone: 'b' } })).spec as Json).nodeSelector).toEqual({
      zone: 'b',
    });
    expect(atomicsIn('v1', 'Pod', pod({ nodeSelector: { zone: 'b' } }))).toEqual(['.spec.nodeSelector']);
  });

  it('PodSpec.imagePullSecrets: a list-map by name of LocalObjectReference, +structType=atomic', () => {
    const live = pod({ imagePullSecrets: [{ name: 'a' }] });
    const patch = pod({ imagePullSecrets: [{ name: 'b' }] });
    expect((applied('v1', 'Pod', live, patch).spec as Json).imagePullSecrets).toEqual([{ name: 'a' }, { name: 'b' }]);
    expect(atomicsIn('v1', 'Pod', patch)).toEqual(['.spec.imagePullSecrets[0]']);
  });

  it('a pod template reaches the same PodSpec: Deployment, CronJob (jobTemplate), StatefulSet', () => {
    const spec = { containers: [{ name: 'c', image: 'x' }], nodeSelector: { a: 'b' } };
    expect(atomicsIn('apps/v1', 'Deployment', { spec: { template: { spec } } })).toEqual([
      '.spec.template.spec.nodeSelector',
    ]);
    expect(atomicsIn('batch/v1', 'CronJob', { spec: { jobTemplate: { spec: { template: { spec } } } } })).toEqual([
      '.spec.jobTemplate.spec.template.spec.nodeSelector',
    ]);
    expect(atomicsIn('apps/v1', 'StatefulSet', { spec: { selector: { matchLabels: { a: 'b' } } } })).toEqual([
      '.spec.selector',
    ]);
  });

  it('ServiceSpec.ports: +listMapKey=port +listMapKey=protocol; ServiceSpec.selector +mapType=atomic', () => {
    const live = { spec: { ports: [{ port: 80, targetPort: 8080 }, { port: 443 }] } };
    const out = applied('v1', 'Service', live, { spec: { ports: [{ port: 80, protocol: 'TCP', name: 'http' }] } });
    expect((out.spec as Json).ports).toEqual([
      { port: 80, targetPort: 8080, protocol: 'TCP', name: 'http' },
      { port: 443 },
    ]);
    expect(atomicsIn('v1', 'Service', { spec: { selector: { app: 'a' } } })).toEqual(['.spec.selector']);
  });

  it('ObjectMeta.finalizers: +listType=set, the union; ownerReferences a list-map by uid of atomic entries', () => {
    const out = applied(
      'v1',
      'ConfigMap',
      { metadata: { finalizers: ['a', 'b'] } },
      { metadata: { finalizers: ['b', 'c'] } },
    );
    expect((out.metadata as Json).finalizers).toEqual(['a', 'b', 'c']);
    expect(
      atomicsIn('v1', 'Secret', { metadata: { ownerReferences: [{ uid: 'u', name: 'n' }], labels: { a: 'b' } } }),
    ).toEqual(['.metadata.ownerReferences[0]']);
  });

  it('kinds the hand-written table lacked: NetworkPolicy, Ingress, MutatingWebhookConfiguration, ResourceClaim', () => {
    // NetworkPolicySpec.podSelector is a LabelSelector (+structType=atomic); policyTypes +listType=atomic.
    expect(
      atomicsIn('networking.k8s.io/v1', 'NetworkPolicy', { spec: { podSelector: {}, policyTypes: ['Ingress'] } }),
    ).toEqual(['.spec.podSelector', '.spec.policyTypes']);
    // IngressSpec.rules +listType=atomic; IngressBackend.service.port (ServiceBackendPort) +structType=atomic.
    expect(
      atomicsIn('networking.k8s.io/v1', 'Ingress', {
        spec: { defaultBackend: { service: { name: 's', port: { number: 80 } } }, rules: [] },
      }),
    ).toEqual(['.spec.defaultBackend.service.port', '.spec.rules']);
    // MutatingWebhookConfiguration.webhooks: +listType=map +listMapKey=name.
    const webhooks = applied(
      'admissionregistration.k8s.io/v1',
      'MutatingWebhookConfiguration',
      { webhooks: [{ name: 'a', timeoutSeconds: 5 }, { name: 'b' }] },
      { webhooks: [{ name: 'b', timeoutSeconds: 3 }] },
    ).webhooks;
    expect(webhooks).toEqual([
      { name: 'a', timeoutSeconds: 5 },
      { name: 'b', timeoutSeconds: 3 },
    ]);
    expect(typeOfKind(MERGE_SCHEMA, 'resource.k8s.io/v1', 'ResourceClaim')).toEqual({
      named: 'io.k8s.api.resource.v1.ResourceClaim',
    });
  });

  it('every kind names a type of the schema, and the text reads back to itself', () => {
    expect(Object.keys(MERGE_SCHEMA.kinds).length).toBeGreaterThan(100);
    for (const [kind, type] of Object.entries(MERGE_SCHEMA.kinds)) expect(MERGE_SCHEMA.types[type], kind).toBeDefined();
    expect(formatMergeSchema(parseMergeSchema(MERGE_SCHEMA_TEXT))).toEqual(MERGE_SCHEMA_TEXT);
  });
});
