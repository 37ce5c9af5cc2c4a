// Plugins only an apiserver can serve: they ask its authorizer, which a webhook cannot. They have
// no Lambda and stay out of functions/index.ts (which drives the local server, packaging and the
// webhooks); `emit --native` compiles them from their AdmissionConfiguration entries (an entry
// names them: upstream enables the three certificate plugins by default, so most clusters already
// run them in-tree; the policies are for clusters where they are off).
//
// Each one asks the authorizer as upstream does and refuses with upstream's message:
//   CertificateApproval       kubernetes plugin/pkg/admission/certificates/approval
//   CertificateSigning        kubernetes plugin/pkg/admission/certificates/signing
//   ClusterTrustBundleAttest  kubernetes plugin/pkg/admission/certificates/ctbattest
//   route.openshift.io/IngressAdmission  openshift-kube-apiserver/admission/route/ingressadmission
import { NATIVE_ONLY_PLUGIN_NAMES } from '../../lib/config/known-plugins.js';
import type { AnyAdmissionPlugin, WebhookRule } from '../../lib/admission/plugin.js';
import { DEFAULT_TIMEOUT_SECONDS, definePlugin } from '../../lib/admission/plugin.js';
import { openShiftConfig } from '../../lib/config/fields.js';
import type { NativeCompiler } from './policy.js';

/** Their policies apply in every namespace, as upstream: a policy has no outage to recover from. */
const SHARED = { writes: false, needs: [], systemNamespaces: 'include' } as const;

function nativeOnly(
  upstreamName: string,
  name: string,
  summary: string,
  rules: readonly WebhookRule[],
): Pick<AnyAdmissionPlugin, 'metadata'> {
  return {
    metadata: {
      upstreamName,
      name,
      summary,
      validating: { rules, failurePolicy: 'Fail', timeoutSeconds: DEFAULT_TIMEOUT_SECONDS },
      ...SHARED,
    },
  };
}

const CSR_RULE = (subresource: string): WebhookRule => ({
  operations: ['UPDATE'],
  apiGroups: ['certificates.k8s.io'],
  apiVersions: ['*'],
  resources: [`certificatesigningrequests/${subresource}`],
  scope: 'Cluster',
});
const CTB_RULE: WebhookRule = {
  operations: ['CREATE', 'UPDATE'],
  apiGroups: ['certificates.k8s.io'],
  apiVersions: ['*'],
  resources: ['clustertrustbundles'],
  scope: 'Cluster',
};
const INGRESS_RULE: WebhookRule = {
  operations: ['CREATE', 'UPDATE'],
  apiGroups: ['networking.k8s.io'],
  apiVersions: ['*'],
  resources: ['ingresses'],
  scope: 'Namespaced',
};

// Upstream's certificate plugins take no configuration and ignore their entry; so do these.
export const certificateApproval = definePlugin({
  ...nativeOnly(
    'CertificateApproval',
    'certificate-approval',
    'Refuses approving a CertificateSigningRequest without `approve` on its signer (signers in certificates.k8s.io).',
    [CSR_RULE('approval')],
  ),
});

export const certificateSigning = definePlugin({
  ...nativeOnly(
    'CertificateSigning',
    'certificate-signing',
    "Refuses setting a CertificateSigningRequest's certificate or conditions without `sign` on its signer.",
    [CSR_RULE('status')],
  ),
});

export const clusterTrustBundleAttest = definePlugin({
  ...nativeOnly(
    'ClusterTrustBundleAttest',
    'cluster-trust-bundle-attest',
    'Refuses writing a ClusterTrustBundle for a signer without `attest` on that signer.',
    [CTB_RULE],
  ),
});

export interface IngressAdmissionConfig {
  readonly allowHostnameChanges: boolean;
}

export const ingressAdmission = definePlugin<IngressAdmissionConfig>({
  ...nativeOnly(
    'route.openshift.io/IngressAdmission',
    'ingress-admission',
    'Refuses Ingress hosts set or changed without `create`/`update` on routes/custom-host (OpenShift route.openshift.io/IngressAdmission).',
    [INGRESS_RULE],
  ),
  configure(raw) {
    const entry = openShiftConfig(
      'route.openshift.io/IngressAdmission',
      raw,
      'route.openshift.io/v1',
      'IngressAdmissionConfig',
      ['allowHostnameChanges'],
    );
    return { allowHostnameChanges: entry?.boolean('allowHostnameChanges', false) ?? false };
  },
});

export const nativeOnlyPlugins: readonly AnyAdmissionPlugin[] = [
  certificateApproval,
  certificateSigning,
  clusterTrustBundleAttest,
  ingressAdmission,
];

/** True for an entry naming one of them (lib/config keeps their names, for every command's line). */
export const isNativeOnly = (name: string): boolean => NATIVE_ONLY_PLUGIN_NAMES.has(name);

// --- their policies -------------------------------------------------------------------------

/**
 * IsAuthorizedForSignerName: `verb` on the signer, else on its domain's wildcard
 * (`example.com/*`); an authorizer error counts as no.
 */
const authorizedForSigner = (verb: string, signerName: string) =>
  `authorizer.group('certificates.k8s.io').resource('signers').name(${signerName}).check('${verb}').allowed() || authorizer.group('certificates.k8s.io').resource('signers').name(${signerName}.split('/')[0] + '/*').check('${verb}').allowed()`;

/** Go's %q of a signer name (a qualified name: nothing to escape). */
const quoted = (text: string) => `'"' + ${text} + '"'`;

export const certificateApprovalPolicy: NativeCompiler = {
  name: 'certificate-approval',
  compile: () => ({
    policies: [
      {
        kind: 'ValidatingAdmissionPolicy',
        rules: [CSR_RULE('approval')],
        // The old object's signer: the approval endpoint may not change it.
        variables: [{ name: 'signerName', expression: "oldObject.spec.?signerName.orValue('')" }],
        validations: [
          {
            expression: authorizedForSigner('approve', 'variables.signerName'),
            messageExpression: `'user not permitted to approve requests with signerName ' + ${quoted('variables.signerName')}`,
          },
        ],
      },
    ],
  }),
};

export const certificateSigningPolicy: NativeCompiler = {
  name: 'certificate-signing',
  compile: () => ({
    policies: [
      {
        kind: 'ValidatingAdmissionPolicy',
        rules: [CSR_RULE('status')],
        // Only when status.certificate or status.conditions change.
        matchConditions: [
          {
            name: 'certificate-or-conditions-change',
            expression:
              "object.?status.?certificate.orValue('') != oldObject.?status.?certificate.orValue('') || object.?status.?conditions.orValue([]) != oldObject.?status.?conditions.orValue([])",
          },
        ],
        variables: [{ name: 'signerName', expression: "oldObject.spec.?signerName.orValue('')" }],
        validations: [
          {
            expression: authorizedForSigner('sign', 'variables.signerName'),
            messageExpression: `'user not permitted to sign requests with signerName ' + ${quoted('variables.signerName')}`,
          },
        ],
      },
    ],
  }),
};

/** metadata fields an update may change without attesting again (rbac.IsOnlyMutatingGCFields). */
const GC_FIELDS = "['ownerReferences', 'finalizers', 'selfLink', 'managedFields']";

export const clusterTrustBundleAttestPolicy: NativeCompiler = {
  name: 'cluster-trust-bundle-attest',
  compile: () => ({
    policies: [
      {
        kind: 'ValidatingAdmissionPolicy',
        rules: [CTB_RULE],
        matchConditions: [
          // Without a signer there is nothing to attest.
          { name: 'has-signer', expression: "object.spec.?signerName.orValue('') != ''" },
          {
            // Storage migration and garbage collection pass: an update of GC fields only.
            name: 'not-only-gc-fields',
            expression: `request.operation != 'UPDATE' || oldObject == null || !(object.filter(k, k != 'metadata').all(k, k in oldObject && object[k] == oldObject[k]) && oldObject.filter(k, k != 'metadata').all(k, k in object) && object.metadata.filter(k, !(k in ${GC_FIELDS})).all(k, k in oldObject.metadata && object.metadata[k] == oldObject.metadata[k]) && oldObject.metadata.filter(k, !(k in ${GC_FIELDS})).all(k, k in object.metadata))`,
          },
        ],
        validations: [
          {
            expression: authorizedForSigner('attest', 'object.spec.signerName'),
            messageExpression: `'user not permitted to attest for signerName ' + ${quoted('object.spec.signerName')}`,
          },
        ],
      },
    ],
  }),
};

export const ingressAdmissionPolicy: NativeCompiler<IngressAdmissionConfig> = {
  name: 'ingress-admission',
  compile: (config) => ({
    policies: [
      {
        kind: 'ValidatingAdmissionPolicy',
        rules: [INGRESS_RULE],
        variables: [
          { name: 'hosts', expression: "object.spec.?rules.orValue([]).map(r, r.?host.orValue(''))" },
          {
            // The first rule with a host: the one OpenShift asks about on a create.
            name: 'firstHost',
            expression:
              "variables.hosts.exists(h, h != '') ? variables.hosts.indexOf(variables.hosts.filter(h, h != '')[0]) : -1",
          },
          {
            name: 'hostChanged',
            expression: config.allowHostnameChanges
              ? 'false'
              : "oldObject != null && !variables.hosts.all(h, h in oldObject.spec.?rules.orValue([]).map(r, r.?host.orValue('')))",
          },
        ],
        validations: [
          {
            expression:
              "request.operation != 'CREATE' || variables.firstHost < 0 || authorizer.group('route.openshift.io').resource('routes').subresource('custom-host').namespace(request.namespace).check('create').allowed()",
            messageExpression:
              "'spec.rules[' + string(variables.firstHost) + ']: Forbidden: you do not have permission to set host fields in ingress rules'",
            reason: 'Invalid',
          },
          {
            expression:
              "request.operation != 'UPDATE' || !variables.hostChanged || authorizer.group('route.openshift.io').resource('routes').subresource('custom-host').namespace(request.namespace).name(request.name).check('update').allowed()",
            message: 'cannot change hostname',
          },
        ],
      },
    ],
    differences: [
      "OpenShift's source matches Ingresses of the extensions group; the policy judges networking.k8s.io Ingresses, the API that serves them",
      "an authorizer error refuses with the plugin's message, where OpenShift answers the error; a refused hostname change is 403, where OpenShift answers 500",
    ],
  }),
};
