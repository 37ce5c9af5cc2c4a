// Realistic reviews for the benchmarks: the pod create captured from a kube-apiserver, and small
// but complete objects for plugins that do not look at pods.
import { readFileSync } from 'node:fs';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';

export const capturedPodReview = readFileSync(
  new URL('../fixtures/apiserver/admissionreview-v1-pod-create-k8s-v1.20.2.json', import.meta.url),
  'utf8',
);

const base = JSON.parse(capturedPodReview);

const objects: Record<string, { group: string; kind: string; object: Record<string, unknown> }> = {
  services: {
    group: '',
    kind: 'Service',
    object: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 't1' },
      spec: { type: 'ClusterIP', ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }], selector: { app: 'web' } },
    },
  },
  nodes: {
    group: '',
    kind: 'Node',
    object: {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'node-1', labels: { 'kubernetes.io/hostname': 'node-1' } },
      spec: {},
    },
  },
  namespaces: {
    group: '',
    kind: 'Namespace',
    object: {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 't1', labels: { team: 'a' } },
      spec: { finalizers: ['kubernetes'] },
    },
  },
  persistentvolumeclaims: {
    group: '',
    kind: 'PersistentVolumeClaim',
    object: {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: 't1' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    },
  },
};

/** A review for the first resource the plugin's rules name, as JSON text. */
export function sampleReviewFor(plugin: AnyAdmissionPlugin): { resource: string; body: string } {
  const rules = plugin.metadata.validating?.rules ?? plugin.metadata.mutating?.rules ?? [];
  const resource = rules.flatMap((r) => r.resources).find((r) => r in objects);
  if (resource === undefined) return { resource: 'pods', body: capturedPodReview };
  const sample = objects[resource];
  const meta = sample.object.metadata as { name: string; namespace?: string };
  const request = {
    ...base.request,
    kind: { group: sample.group, version: 'v1', kind: sample.kind },
    resource: { group: sample.group, version: 'v1', resource },
    requestKind: { group: sample.group, version: 'v1', kind: sample.kind },
    requestResource: { group: sample.group, version: 'v1', resource },
    name: meta.name,
    namespace: meta.namespace,
    object: sample.object,
  };
  return { resource, body: JSON.stringify({ ...base, request }) };
}

/** The captured pod create, its pod made restricted-compliant with an init container and `containers` containers. */
export function restrictedPodReview(containers: number): string {
  const review = JSON.parse(capturedPodReview);
  const pod = review.request.object;
  const hardened = (name: string) => ({
    name,
    image: `registry.example/${name}:1.0`,
    ports: [{ containerPort: 8080, protocol: 'TCP' }],
    resources: { requests: { cpu: '100m', memory: '64Mi' } },
    securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true },
  });
  pod.spec = {
    ...pod.spec,
    securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
    initContainers: [hardened('init')],
    containers: Array.from({ length: containers }, (_, i) => hardened(`app-${i}`)),
    volumes: [
      { name: 'config', configMap: { name: 'app' } },
      { name: 'tmp', emptyDir: {} },
    ],
  };
  return JSON.stringify(review);
}
