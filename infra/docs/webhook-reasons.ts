// Why each webhook fails open or closed: the one column of the every-webhook table that the code
// cannot say. The generator refuses to write the table when a judging webhook has no reason here,
// so a new plugin or phase cannot slip into the documentation unexplained.

export interface WebhookReasons {
  /** The validating (judging) webhook. */
  readonly validate?: string;
  /** The mutating webhook, where the general reason for mutations is not the whole story. */
  readonly mutate?: string;
  /** The validating webhook that fails open beside a failing-closed one (`<plugin>.validate-ignore`). */
  readonly validateIgnore?: string;
}

/** Every mutation fails open: a later validating webhook checks the final object. */
export const MUTATION_REASON = 'a mutation fails open; the validating webhook checks the final object';
/** Every learning webhook fails open: it only records what the cluster writes. */
export const LEARNING_REASON = 'learning fails open: an outage costs observations, never a write';

export const WEBHOOK_REASONS: Readonly<Record<string, WebhookReasons>> = {
  'always-admit': { validate: 'its answer is always "allowed"' },
  'always-deny': {
    validate: 'a pipeline test whose whole point is to refuse; confine it with `--staged`',
  },
  'always-pull-images': { validate: "upstream's Validate: image credentials are a security boundary" },
  'certificate-subject-restriction': {
    validate: 'refuses `system:masters` client certificates: a security boundary',
  },
  'cluster-resource-override': { validate: "OpenShift's Validate: the override is what quota and scheduling count" },
  'cluster-resource-quota': {
    validate: 'only a create can exceed a quota; it counts as a side effect, so it fails closed as ResourceQuota',
  },
  'default-ingress-class': { validate: 'upstream only mutates; this twin is ours and a convenience' },
  'default-storage-class': { validate: 'upstream only mutates; this twin is ours and a convenience' },
  'default-toleration-seconds': { validate: 'upstream only mutates; this twin checks new pods only' },
  'deny-service-external-ips': { validate: "upstream's Validate: the CVE-2020-8554 mitigation" },
  'event-rate-limit': { validate: 'losing a rate limit beats losing events' },
  'extended-resource-toleration': { validate: 'upstream only mutates; this twin checks new pods only' },
  'external-ip-ranger': { validate: "OpenShift's Validate: a network boundary" },
  'image-policy-webhook': {
    validate: 'the backend decides which images may run: a boundary',
    mutate: 'annotates pods admitted while the backend was unreachable (defaultAllow)',
  },
  'limit-pod-hard-anti-affinity-topology': { validate: "upstream's Validate" },
  'limit-ranger': {
    validate: "the apiserver's own LimitRanger, on by default, still enforces namespace LimitRanges in an outage",
  },
  'mutating-admission-policy': {
    mutate: "each policy's failurePolicy: Fail policies on one webhook, Ignore policies on another",
  },
  'namespace-exists': { validate: "it sees every namespaced write; the apiserver's own NamespaceLifecycle backs it" },
  'namespace-lifecycle': {
    validate: "it sees every namespaced write, kube-system included; the apiserver's own plugin is on by default",
  },
  'namespace-reservation': { validate: 'reserved names are the boundary it exists for' },
  'node-restriction': {
    validate: "a security boundary, for nodes' requests only (a matchCondition); failing open would hand a bypass",
  },
  'origin-pod-node-environment': {
    validate: "OpenShift's Validate: a placement boundary; it refuses a pod the fail-open merge never reached",
  },
  'persistent-volume-claim-resize': { validate: "upstream's Validate" },
  'pod-node-constraints': { validate: "OpenShift's Validate: a placement boundary" },
  'pod-node-selector': {
    validate: "upstream's Validate: tenant placement is a boundary; it refuses a pod the fail-open merge never reached",
  },
  'pod-security': {
    validate: 'enforces the Pod Security Standards: a security boundary',
    validateIgnore:
      'Namespace label values: the built-in PodSecurity refuses invalid ones anyway, so an outage must not block namespace writes',
  },
  'pod-toleration-restriction': { validate: "upstream's Validate: a toleration whitelist is a boundary" },
  priority: { validate: "upstream's Validate: one global default PriorityClass at most" },
  'resource-quota': { validate: 'only a create can exceed a quota; a quota that fails open is not one' },
  'restricted-endpoints-admission': {
    validate: "OpenShift's Validate: a network boundary (CVE-2021-25737, CVE-2021-25740)",
  },
  'run-once-duration': {
    validate:
      'upstream only mutates; the cap is a boundary, so this twin refuses a run-once pod whose deadline the fail-open mutation would still lower',
  },
  'runtime-class': { validate: "upstream's Validate: overhead is what quota and eviction count" },
  'storage-object-in-use-protection': {
    validate: 'upstream only mutates; the in-cluster controller adds the same finalizers',
  },
  'taint-nodes-by-condition': {
    validate: 'upstream only mutates; a closed twin would stop Nodes registering in an outage',
  },
  'validating-admission-policy': {
    validate: "each policy's own failurePolicy decides its errors, in the handler; the webhook itself fails closed",
  },
};
