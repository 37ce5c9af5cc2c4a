// The pod upstream's namespace plugin tests (NamespaceLifecycle, NamespaceExists) send into a
// namespace, the three requests they make with it, and the namespace controller's final DELETE.
import type { KubeObject } from '../../lib/admission/types.js';
import { namespaceReview } from './dynamodb.js';
import type { ReviewInput } from './review.js';

export const newPod = (namespace: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: '123', namespace },
  spec: { volumes: [{ name: 'vol' }], containers: [{ name: 'ctr', image: 'image' }] },
});

export const podCreate = (namespace: string, extra: Partial<ReviewInput> = {}): ReviewInput => ({
  object: newPod(namespace),
  ...extra,
});

export const podUpdate = (namespace: string): ReviewInput => ({
  operation: 'UPDATE',
  object: newPod(namespace),
  oldObject: newPod(namespace),
});

export const podDelete = (namespace: string): ReviewInput => ({
  operation: 'DELETE',
  object: null,
  oldObject: newPod(namespace),
  name: '123',
  namespace,
});

/** The namespace controller's final DELETE: already terminating, no finalizer left. */
export const finalDelete = (name: string): ReviewInput =>
  namespaceReview(
    'DELETE',
    name,
    {},
    {
      oldObject: {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, deletionTimestamp: '2026-01-01T00:00:00Z' },
        spec: { finalizers: [] },
        status: { phase: 'Terminating' },
      },
    },
  );
