// Why a served plugin has no native compiler: what it needs that a policy's CEL cannot see or do.
// CEL sees the request (object, oldObject, request), the request's namespace (namespaceObject),
// params, variables and the authorizer; it cannot read other objects, keep state between requests,
// parse JSON held in a string, parse a certificate request, or call out.
const WEBHOOK_ONLY: Readonly<Record<string, string>> = {
  'certificate-subject-restriction': 'it parses the PEM certificate request in spec.request, which CEL cannot decode',
  'cluster-resource-override':
    "it reads the namespace's LimitRanges (other objects) and scales quantities by percentages, which CEL's quantity library cannot",
  'cluster-resource-quota': 'it charges usage across namespaces and requests (state CEL cannot keep)',
  'default-ingress-class': "it needs the cluster's default IngressClass (another object)",
  'default-storage-class': "it needs the cluster's default StorageClass (another object)",
  'event-rate-limit': 'it keeps token buckets across requests (state CEL cannot keep)',
  'image-policy-webhook': 'it asks an external backend about every image',
  'limit-ranger': "it needs the namespace's LimitRanges (other objects)",
  'mutating-admission-policy':
    'its MutatingAdmissionPolicies are native objects already: on Kubernetes 1.36+ apply them to the cluster itself',
  'namespace-exists': 'it needs to know whether another object (the namespace) exists',
  'namespace-lifecycle':
    'it needs to know whether the namespace exists, which namespaceObject cannot say (and every apiserver already runs it)',
  'node-restriction': "it needs pods' nodes and Nodes' identities (other objects, learned from their writes)",
  'persistent-volume-claim-resize': "it needs the claim's StorageClass (another object)",
  'pod-toleration-restriction':
    'its namespace annotations hold JSON tolerations, which CEL cannot parse (namespaceObject gives the string only)',
  priority: 'it needs PriorityClasses (other objects)',
  'resource-quota': 'it charges usage across requests (state CEL cannot keep)',
  'runtime-class': 'it needs RuntimeClasses (other objects)',
  'validating-admission-policy':
    'its ValidatingAdmissionPolicies are native objects already: on Kubernetes 1.30+ apply them to the cluster itself',
};

export function webhookOnly(plugin: string): string {
  return WEBHOOK_ONLY[plugin] ?? 'no native compiler for it';
}

export const webhookOnlyPlugins = (): readonly string[] => Object.keys(WEBHOOK_ONLY);
