// Admission plugin names the kube-apiserver (and OpenShift's) knows, whether or not this project
// serves them. An AdmissionConfiguration entry for one we do not serve is ignored, as the
// apiserver ignores entries of disabled plugins, so a self-managed cluster's file carries over;
// any other name is a typo, and fails with the closest name.

/** kube-apiserver admission plugins, current and removed (k8s.io/kubernetes/pkg/kubeapiserver/options/plugins.go). */
export const KUBERNETES_PLUGINS = [
  'AlwaysAdmit',
  'AlwaysDeny',
  'AlwaysPullImages',
  'CertificateApproval',
  'CertificateSigning',
  'CertificateSubjectRestriction',
  'ClusterTrustBundleAttest',
  'DefaultIngressClass',
  'DefaultStorageClass',
  'DefaultTolerationSeconds',
  'DenyServiceExternalIPs',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'ImagePolicyWebhook',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionWebhook',
  'NamespaceAutoProvision',
  'NamespaceExists',
  'NamespaceLifecycle',
  'NodeDeclaredFeatureValidator',
  'NodeRestriction',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'PersistentVolumeLabel',
  'PodNodeSelector',
  'PodSecurity',
  'PodTolerationRestriction',
  'PodTopologyLabels',
  'Priority',
  'ResourceQuota',
  'RuntimeClass',
  'ServiceAccount',
  'StorageObjectInUseProtection',
  'TaintNodesByCondition',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  // Removed upstream; still found in older clusters' files.
  'DenyEscalatingExec',
  'DenyExecOnPrivileged',
  'Initializers',
  'PodPreset',
  'PodSecurityPolicy',
  'SecurityContextDeny',
] as const;

/** OpenShift's registered admission plugin names (openshift/kubernetes openshift-kube-apiserver/admission). */
export const OPENSHIFT_PLUGINS = [
  'authorization.openshift.io/RestrictSubjectBindings',
  'authorization.openshift.io/ValidateRoleBindingRestriction',
  'autoscaling.openshift.io/ClusterResourceOverride',
  'autoscaling.openshift.io/ManagementCPUsOverride',
  'autoscaling.openshift.io/MixedCPUs',
  'autoscaling.openshift.io/RunOnceDuration',
  'config.openshift.io/DenyDeleteClusterConfiguration',
  'config.openshift.io/DenyDeleteClusterOperators',
  'config.openshift.io/RestrictExtremeWorkerLatencyProfile',
  'config.openshift.io/ValidateAPIServer',
  'config.openshift.io/ValidateAuthentication',
  'config.openshift.io/ValidateClusterVersion',
  'config.openshift.io/ValidateConsole',
  'config.openshift.io/ValidateDNS',
  'config.openshift.io/ValidateFeatureGate',
  'config.openshift.io/ValidateImage',
  'config.openshift.io/ValidateOAuth',
  'config.openshift.io/ValidateProject',
  'config.openshift.io/ValidateScheduler',
  'image.openshift.io/ImagePolicy',
  'network.openshift.io/ExternalIPRanger',
  'network.openshift.io/RestrictedEndpointsAdmission',
  'operator.openshift.io/ValidateDNS',
  'project.openshift.io/ProjectRequestLimit',
  'quota.openshift.io/ClusterResourceQuota',
  'quota.openshift.io/ValidateClusterResourceQuota',
  'route.openshift.io/DefaultRoute',
  'route.openshift.io/IngressAdmission',
  'route.openshift.io/RequiredRouteAnnotations',
  'route.openshift.io/ValidateRoute',
  'scheduling.openshift.io/OriginPodNodeEnvironment',
  'scheduling.openshift.io/PodNodeConstraints',
  'security.openshift.io/DefaultSecurityContextConstraints',
  'security.openshift.io/SCCExecRestrictions',
  'security.openshift.io/SecurityContextConstraint',
  'security.openshift.io/ValidateSecurityContextConstraints',
  'storage.openshift.io/CSIInlineVolumeSecurity',
  'storage.openshift.io/PerformantSecurityPolicy',
] as const;

/** This project's own plugins, which no upstream serves (a file written for them stays valid). */
export const PROJECT_PLUGINS = ['NamespaceReservation'] as const;

export const KNOWN_PLUGIN_NAMES: ReadonlySet<string> = new Set<string>([
  ...KUBERNETES_PLUGINS,
  ...OPENSHIFT_PLUGINS,
  ...PROJECT_PLUGINS,
]);

/**
 * Upstream plugins this project serves only as native policies (they need the apiserver's
 * authorizer, which a webhook does not have): `npm run emit -- --native` compiles them
 * (infra/native/native-only.ts); every other command lists their entries as served that way.
 */
export const NATIVE_ONLY_PLUGIN_NAMES: ReadonlySet<string> = new Set([
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'route.openshift.io/IngressAdmission',
]);
