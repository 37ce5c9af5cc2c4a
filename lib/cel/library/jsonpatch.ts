// Kubernetes' JSONPatch library (k8s.io/apiserver/pkg/cel/library/jsonpatch.go), offered to the
// mutations of a MutatingAdmissionPolicy: `jsonpatch.escapeKey(k)` escapes a map key for a JSON
// Pointer (RFC 6901): `~` becomes `~0`, then `/` becomes `~1`.
import { CelScalar, celFunc } from '@bufbuild/cel';

export const JSONPATCH_FUNCTIONS = new Set(['jsonpatch.escapeKey']);

export const jsonPatchLibrary = [
  celFunc('jsonpatch.escapeKey', [CelScalar.STRING], CelScalar.STRING, (key) =>
    key.replaceAll('~', '~0').replaceAll('/', '~1'),
  ),
];
