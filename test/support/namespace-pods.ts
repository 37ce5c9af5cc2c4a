// The pod upstream's namespace plugin tests (NamespaceLifecycle, NamespaceExists) send into a
// namespace, and the three requests they make with it.
import type { KubeObject } from '../../lib/admission/types.js';
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
