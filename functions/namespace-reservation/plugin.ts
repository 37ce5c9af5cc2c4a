// NamespaceReservation: some namespace names carry authority by convention. Controllers, operators
// and humans trust that `kube-*` or `openshift-*` namespaces were made by the platform, and
// policies (pod security exemptions, run-level labels, monitoring) key on those names. OpenShift
// therefore refuses self-service project requests for `openshift`, `kubernetes`, `kube` and names
// starting with `openshift-`, `kubernetes-` or `kube-` (openshift-apiserver's projectrequest REST
// storage). This plugin makes that reservation configurable and applies it to both ways of making
// a namespace: Namespaces and OpenShift ProjectRequests (project.openshift.io/v1 projectrequests).
//
// Configuration (no entry: nothing is reserved and every request is allowed):
//
//   - name: NamespaceReservation
//     configuration:
//       reservedNames: [openshift, kubernetes, kube]
//       reservedPrefixes: [openshift-, kubernetes-, kube-]
//
// Messages: a ProjectRequest is refused with OpenShift's exact text (apierrors.NewForbidden on
// the `project.openshift.io` resource `project`), `project.project.openshift.io "kube-x" is
// forbidden: cannot request a project starting with "kube-"`; a Namespace with the same sentence
// shape for namespaces, `namespaces "kube-x" is forbidden: cannot create a namespace starting with
// "kube-"`, so both read alike and name the reserved name or prefix that matched.

import type { AdmissionRequest } from '../../lib/admission/request.js';
import { isMainResource } from '../../lib/admission/request.js';
import { allowed, denied } from '../../lib/admission/decision.js';
import { goQuote } from '../../lib/admission/field.js';
import { definePlugin, validatingOnly } from '../../lib/admission/plugin.js';
import { ConfigFields } from '../../lib/config/fields.js';

const PLUGIN = 'NamespaceReservation';
const PROJECT_GROUP = 'project.openshift.io';

export interface NamespaceReservationConfig {
  readonly reservedNames: readonly string[];
  readonly reservedPrefixes: readonly string[];
}

const FIELDS = ['reservedNames', 'reservedPrefixes'] as const;

function configure(raw: unknown): NamespaceReservationConfig {
  if (raw === undefined || raw === null) return { reservedNames: [], reservedPrefixes: [] };
  const entry = ConfigFields.of(PLUGIN, raw, `an object with ${FIELDS.join(' and ')}`).allow(...FIELDS);
  return {
    reservedNames: entry.strings('reservedNames', { nonEmpty: true }),
    reservedPrefixes: entry.strings('reservedPrefixes', { nonEmpty: true }),
  };
}

const RULES = [
  { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], scope: 'Cluster' },
  {
    operations: ['CREATE'],
    apiGroups: [PROJECT_GROUP],
    apiVersions: ['v1'],
    resources: ['projectrequests'],
    scope: 'Cluster',
  },
] as const;

type Target = 'namespace' | 'project';

/** Only creates of Namespaces and ProjectRequests (not their subresources) are looked at. */
function targetOf(request: AdmissionRequest): Target | undefined {
  if (request.operation !== 'CREATE') return undefined;
  if (isMainResource(request, '', 'namespaces')) return 'namespace';
  if (isMainResource(request, PROJECT_GROUP, 'projectrequests')) return 'project';
  return undefined;
}

/** The reason a name is reserved, in OpenShift's words; undefined when it is free. */
function reservation(name: string, target: Target, config: NamespaceReservationConfig): string | undefined {
  if (name === '') return undefined;
  const verb = target === 'project' ? 'request a project' : 'create a namespace';
  const reservedName = config.reservedNames.find((reserved) => reserved === name);
  if (reservedName !== undefined) return `cannot ${verb} with the name ${goQuote(reservedName)}`;
  const prefix = config.reservedPrefixes.find((reserved) => name.startsWith(reserved));
  if (prefix !== undefined) return `cannot ${verb} starting with ${goQuote(prefix)}`;
  return undefined;
}

export default definePlugin({
  metadata: {
    upstreamName: PLUGIN,
    name: 'namespace-reservation',
    summary: 'Refuses Namespaces and OpenShift ProjectRequests whose names are reserved by configuration.',
    ...validatingOnly(RULES),
    writes: false,
    needs: [],
    // The selector that skips kube-system, kube-node-lease and our own namespace also matches
    // Namespace objects by their own name, so the apiserver can always recreate its own namespaces
    // even when `kube-` is reserved.
    systemNamespaces: 'exclude',
  },

  configure,

  // Nothing reserved, nothing to judge: not served, so its fail-closed webhook never sees a
  // Namespace create it would only admit (docs/configure.md, "Which plugins run").
  inactiveReason: (config: NamespaceReservationConfig) =>
    config.reservedNames.length === 0 && config.reservedPrefixes.length === 0
      ? 'nothing reserved: add reservedNames or reservedPrefixes to its entry (example: config/examples/namespace-reservation.yaml)'
      : undefined,

  validate(request, { config }) {
    const target = targetOf(request);
    if (target === undefined) return allowed();
    const meta = request.object?.metadata;
    let name = typeof meta?.name === 'string' && meta.name !== '' ? meta.name : request.name;
    // A generated name begins with generateName, so a reserved prefix there is reserved too.
    if (name === '' && typeof meta?.generateName === 'string') name = meta.generateName;
    const reason = reservation(name, target, config);
    if (reason === undefined) return allowed();
    // apierrors.NewForbidden(resource, name, err): OpenShift names the resource `project`.
    const resource =
      target === 'project'
        ? { group: PROJECT_GROUP, kind: 'project', text: `project.${PROJECT_GROUP}` }
        : { group: '', kind: 'namespaces', text: 'namespaces' };
    return denied(`${resource.text} ${goQuote(name)} is forbidden: ${reason}`, 403, 'Forbidden', {
      name,
      group: resource.group,
      kind: resource.kind,
    });
  },
});
