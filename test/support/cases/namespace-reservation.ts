// NamespaceReservation's cases share OpenShift's own reservation (openshift-apiserver's
// projectrequest storage: forbiddenNames and forbiddenPrefixes) and the two resources it judges,
// held once for the plugin's tests and the native policies' proof.

/** OpenShift's reserved names and prefixes, as the plugin's configuration. */
export const OPENSHIFT_RESERVATION = {
  reservedNames: ['openshift', 'kubernetes', 'kube'],
  reservedPrefixes: ['openshift-', 'kubernetes-', 'kube-'],
};

/** A review of a Namespace. */
export const NAMESPACES = { kind: { kind: 'Namespace' }, resource: { resource: 'namespaces' } } as const;
/** A review of a ProjectRequest (project.openshift.io). */
export const PROJECT_REQUESTS = {
  kind: { group: 'project.openshift.io', kind: 'ProjectRequest' },
  resource: { group: 'project.openshift.io', resource: 'projectrequests' },
} as const;
