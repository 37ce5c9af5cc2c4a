// How closely each plugin follows upstream, counted in upstream's own test cases ported into this
// suite: the one place the plugin table and the plugin pages read these figures from. Each entry
// names the upstream tests (kubernetes/kubernetes plugin/pkg/admission/<plugin>/*_test.go, or
// openshift/kubernetes for the OpenShift plugins) and where in test/ they are ported; a figure
// changes here when a ported table changes there. `ported` counts the cases run here, `asUpstream`
// those answered as upstream's test asserts; `notPorted` the upstream cases left out, with why.

export interface Parity {
  /** Upstream cases ported into the suite (absent when upstream's tests are named but not counted). */
  readonly ported?: number;
  /** Of those, the cases answered exactly as upstream's test asserts. */
  readonly asUpstream?: number;
  /** Upstream's tests, with their counts where known: `TestAdmission 9/9`. */
  readonly tests: readonly string[];
  /** Upstream cases not ported (how many, when upstream counts them), and why. */
  readonly notPorted?: { readonly count?: number; readonly why: string };
  /** Where they live in this project's suite. */
  readonly suite: readonly string[];
  /** Anything the figure needs to be read right. */
  readonly note?: string;
}

export const PARITY: Readonly<Record<string, Parity>> = {
  'always-admit': {
    ported: 6,
    asUpstream: 6,
    tests: ['TestAdmissionNonNilAttribute', 'TestAdmissionNilAttribute', 'TestHandles'],
    suite: ['test/plugins/always-admit.test.ts'],
  },
  'always-deny': {
    ported: 5,
    asUpstream: 5,
    tests: ['TestAdmission', 'TestHandles'],
    suite: ['test/plugins/always-deny.test.ts'],
  },
  'always-pull-images': {
    tests: ['TestAdmission', 'TestValidate', 'TestOtherResources', 'TestUpdatePod'],
    suite: ['test/plugins/always-pull-images.test.ts'],
    note: 'every case of the four tests passes, messages verbatim, ephemeral containers and image volumes included',
  },
  'certificate-subject-restriction': {
    ported: 7,
    asUpstream: 7,
    tests: ['TestPlugin_Validate 7/7'],
    suite: ['test/plugins/certificate-subject-restriction.test.ts'],
  },
  'cluster-resource-override': {
    ported: 22,
    asUpstream: 22,
    tests: ['TestLimitRequestAdmission 16/16', 'TestConfigReader 6/6'],
    suite: ['test/plugins/cluster-resource-override.test.ts'],
  },
  'cluster-resource-quota': {
    ported: 3,
    asUpstream: 2,
    tests: [
      'TestGetQuota 2/3',
      "library-go's TestClusterQuotaFuzzer (3 seeded runs of 200 quota and 200 namespace writes)",
    ],
    notPorted: { count: 1, why: 'TestUpdateQuota: the status write the ledger replaces' },
    suite: ['test/plugins/cluster-resource-quota.test.ts'],
    note: 'the third TestGetQuota case, "namespace not synced", differs: OpenShift waits for its informer, here a never-seen namespace gets the answer its rule chooses',
  },
  'default-ingress-class': {
    ported: 8,
    asUpstream: 8,
    tests: ['TestAdmission 8/8'],
    suite: ['test/plugins/default-ingress-class.test.ts'],
  },
  'default-storage-class': {
    ported: 8,
    asUpstream: 8,
    tests: ['TestAdmission 8/8'],
    suite: ['test/plugins/default-storage-class.test.ts'],
  },
  'default-toleration-seconds': {
    ported: 14,
    asUpstream: 14,
    tests: ['TestForgivenessAdmission 10/10', 'TestHandles 4/4'],
    suite: ['test/plugins/default-toleration-seconds.test.ts'],
  },
  'deny-service-external-ips': {
    ported: 9,
    asUpstream: 9,
    tests: ['TestAdmission 9/9'],
    suite: ['test/plugins/deny-service-external-ips.test.ts'],
  },
  'event-rate-limit': {
    ported: 28,
    asUpstream: 26,
    tests: ['TestEventRateLimiting 26/28'],
    suite: ['test/plugins/event-rate-limit.test.ts'],
    note: 'the 2 differences are LRU evictions of `cacheSize`: a bucket here is forgotten once it is full again, never early',
  },
  'extended-resource-toleration': {
    ported: 14,
    asUpstream: 14,
    tests: ['TestAdmit 10/10', 'TestHandles 4/4'],
    suite: ['test/plugins/extended-resource-toleration.test.ts'],
  },
  'external-ip-ranger': {
    ported: 24,
    asUpstream: 24,
    tests: ['TestAdmission 20/20', 'TestHandles 4/4'],
    suite: ['test/plugins/external-ip-ranger.test.ts'],
  },
  'image-policy-webhook': {
    ported: 33,
    asUpstream: 33,
    tests: [
      'TestTLSConfig 6/6',
      'TestWebhookCache 9/9',
      'TestContainerCombinations 8/8',
      'TestDefaultAllow 4/4',
      'TestAnnotationFiltering 2/2',
      'TestReturnedAnnotationAdd 4/4',
    ],
    suite: ['test/plugins/image-policy-webhook.test.ts'],
    note: 'run against a real HTTPS ImageReview backend',
  },
  'limit-pod-hard-anti-affinity-topology': {
    tests: ['TestInterPodAffinityAdmission 6/6', 'TestHandles', 'TestOtherResources'],
    suite: ['test/plugins/limit-pod-hard-anti-affinity-topology.test.ts'],
    note: 'every case of the three tests passes',
  },
  'limit-ranger': {
    ported: 94,
    asUpstream: 93,
    tests: [
      'TestDefaultContainerResourceRequirements 1/1',
      'TestMergePodResourceRequirements 2/3',
      'TestPodLimitFunc 79/79',
      'TestPodLimitFuncApplyDefault 1/1',
      'TestLimitRangerIgnoresSubresource 1/1',
      'TestLimitRangerAdmitPod 2/2',
      'TestPersistentVolumeClaimLimitFunc 6/6',
      'TestLimitRanger_GetLimitRangesFixed22422 (its namespace isolation) 1/1',
    ],
    suite: ['test/plugins/limit-ranger.test.ts'],
    note: "the 94th answers as upstream's code does on the wire: its Go test shapes the expected annotation by sharing one map between two containers",
  },
  // Upstream's tables as they stand now (staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/
  // mutating): compilation_test.go TestCompilation 14 rows (v1beta1), patch/json_patch_test.go
  // TestJSONPatch 28 rows of which the first is written twice (27 cases), patch/smd_test.go
  // TestApplyConfiguration 12, dispatcher_test.go TestDispatcher 5; no row is in two of them. In
  // test/plugins/mutating-admission-policy.test.ts, COMPILATION holds TestCompilation's 13 evaluated
  // rows, TestJSONPatch's 27 and 3 of TestApplyConfiguration's (under the names of the older
  // TestCompilation that held them all), APPLY_CONFIGURATION 6 more, the strict-decoding table its
  // "invalid field name" row, and two `it`s the rows refused at start: TestCompilation's "authorizer
  // check" (the difference) and TestApplyConfiguration's two non-Object results (upstream's message,
  // at start rather than at the first request). The 15 TestValidateMutatingAdmissionPolicy cases
  // (pkg/apis/admissionregistration/validation) are not counted.
  'mutating-admission-policy': {
    ported: 58,
    asUpstream: 57,
    tests: ['TestCompilation 13/14', 'TestJSONPatch 27/27', 'TestApplyConfiguration 12/12', 'TestDispatcher 5/5'],
    suite: ['test/plugins/mutating-admission-policy.test.ts', 'test/plugins/mutating-admission-policy-handler.test.ts'],
    note: 'the 1 difference, TestCompilation\'s "authorizer check", uses `authorizer`, which is refused at start; TestJSONPatch writes its first row twice, counted once; TestApplyConfiguration\'s two expressions that do not evaluate to an Object are refused at start with upstream\'s message, where upstream answers it at the request; its "update listType=map entry" runs on the stored (defaulted) pod template, so the volume keeps the emptyDir its defaulter gave it beside the merged hostPath',
  },
  'namespace-exists': {
    ported: 2,
    asUpstream: 2,
    tests: ['TestAdmissionNamespaceExists', 'TestAdmissionNamespaceDoesNotExist'],
    suite: ['test/plugins/namespace-exists.test.ts'],
  },
  'namespace-lifecycle': {
    ported: 5,
    asUpstream: 5,
    tests: ["all 5 of upstream's tests"],
    suite: ['test/plugins/namespace-lifecycle.test.ts'],
    note: "upstream's live-lookup cache (ForceLiveLookup TTL) has no counterpart",
  },
  'namespace-reservation': {
    tests: [],
    suite: ['test/plugins/namespace-reservation.test.ts'],
    note: "no upstream test table: the plugin is this project's, after openshift-apiserver's reserved project names, and its texts are openshift-apiserver's",
  },
  'node-restriction': {
    ported: 203,
    asUpstream: 195,
    tests: ["upstream's admission_test.go tables (203 cases)"],
    suite: ['test/plugins/node-restriction.test.ts'],
    note: "the 8 differences are token requests: 7 need the audience looked up in the pod's CSI drivers, PVs and the authorizer, and 1 is a pod never seen (allowed here, NotFound upstream)",
  },
  // openshift/kubernetes openshift-kube-apiserver/admission/scheduler/nodeenv: admission_test.go
  // TestPodAdmission's 12 rows (its nodeName rows judged by the learned Node's labels; the row whose
  // node is missing is the difference) and TestHandles' 4 operations, labelselector/
  // labelselector_test.go TestLabelSelectorParse's 17 rows.
  'origin-pod-node-environment': {
    ported: 33,
    asUpstream: 32,
    tests: ['TestPodAdmission 11/12', 'TestHandles 4/4', 'TestLabelSelectorParse 17/17'],
    notPorted: { why: 'TestLabelConflict and TestLabelMerge (internal helpers)' },
    suite: ['test/plugins/origin-pod-node-environment.test.ts'],
    note: 'the 1 difference: a pod naming a node never learned is admitted with a warning, where OpenShift refuses a node its lister does not have',
  },
  'persistent-volume-claim-resize': {
    ported: 5,
    asUpstream: 5,
    tests: ['TestPVCResizeAdmission 5/5'],
    suite: ['test/plugins/persistent-volume-claim-resize.test.ts'],
  },
  'pod-node-constraints': {
    ported: 15,
    asUpstream: 15,
    tests: [
      'TestPodNodeConstraints 11/11',
      'TestPodNodeConstraintsPodUpdate 1/1',
      'TestPodNodeConstraintsNonHandledResources 1/1',
      'TestReadConfig 1/1',
      'TestDefaults 1/1',
    ],
    suite: ['test/plugins/pod-node-constraints.test.ts'],
  },
  'pod-node-selector': {
    ported: 14,
    asUpstream: 14,
    tests: ['TestPodAdmission 10/10', 'TestHandles 4/4'],
    suite: ['test/plugins/pod-node-selector.test.ts'],
  },
  // staging/src/k8s.io/pod-security-admission: policy/check_*_test.go (46 rows of 14 checks; the
  // suite's 47th row, seLinuxOptions at v1.30, is this project's; newer upstream repeats the
  // seLinuxOptions rows with field error lists, which no admission answer carries, not counted),
  // api/helpers_test.go TestPolicyToEvaluate (11 rows; the suite's 12th case is this project's),
  // admission/admission_test.go TestValidatePodAndController (36) and TestValidateNamespace (22).
  // The fixtures are counted apart: 19 checks' generators, run as test/run.go runs them.
  'pod-security': {
    ported: 104,
    asUpstream: 103,
    tests: [
      'per-check tables 46/46 rows (14 checks)',
      'TestPolicyToEvaluate 11/11',
      'TestValidatePodAndController 30/36',
      'TestValidateNamespace 16/22',
      'the fixtures of test/fixtures_*.go: 25 generators and 3 of this project (the Windows relaxations of v1.25) at all 900 (level, version, check) combinations, 959 passing and 3,452 failing pods, every one as upstream',
    ],
    notPorted: {
      count: 11,
      why: "6 cases of TestValidatePodAndController need a failing decoder or a namespace lookup error, which a webhook receiving JSON and learned labels does not have; 5 of TestValidateNamespace dry-run a namespace's existing pods (a sixth is ported, asserted as this plugin answers)",
    },
    suite: [
      'test/plugins/pod-security.test.ts',
      'test/plugins/pod-security-checks.test.ts',
      'test/plugins/pod-security-policy.test.ts',
    ],
    note: 'the figure counts table rows; the fixture pods are counted apart',
  },
  'pod-toleration-restriction': {
    ported: 18,
    asUpstream: 18,
    tests: ['TestPodAdmission 13/13', 'TestHandles 4/4', 'TestIgnoreUpdatingInitializedPod 1/1'],
    suite: ['test/plugins/pod-toleration-restriction.test.ts'],
  },
  // plugin/pkg/admission/priority/admission_test.go. TestPriorityClassAdmission's 8 rows run twice
  // (before and after the write's own class is learned) and count once; the suite's TestPodAdmission
  // block has 2 cases of this project's beside upstream's 16 rows.
  priority: {
    ported: 29,
    asUpstream: 29,
    tests: ['TestPriorityClassAdmission 8/8', 'TestDefaultPriority 5/5', 'TestPodAdmission 16/16'],
    notPorted: {
      count: 8,
      why: "TestAdmitPodGroup, in upstream's newest admission_test.go: PodGroups (scheduling.k8s.io/v1alpha2, alpha behind feature gates) are not subscribed to",
    },
    suite: ['test/plugins/priority.test.ts'],
  },
  'resource-quota': {
    ported: 12,
    asUpstream: 12,
    tests: [
      'TestAdmissionIgnoresDelete',
      'TestAdmissionIgnoresSubresources',
      'TestAdmitBelowQuotaLimit',
      'TestAdmitExceedQuotaLimit',
      'TestAdmitEnforceQuotaConstraints',
      'TestAdmitPodInNamespaceWithoutQuota',
      'TestAdmitBelowTerminatingQuotaLimit',
      'TestAdmitBelowBestEffortQuotaLimit',
      'TestAdmitBestEffortQuotaLimitIgnoresBurstable',
      'TestAdmitLimitedResourceNoQuota',
      'TestAdmitLimitedResourceWithQuota',
      'TestAdmitLimitedResourceWithMultipleQuota',
    ],
    suite: ['test/plugins/resource-quota.test.ts', 'test/quota'],
    note: "usage comes from earlier creates instead of a preset status.used; upstream's pod and claim evaluator tables are tested on their own in test/quota",
  },
  'restricted-endpoints-admission': {
    tests: [],
    suite: ['test/plugins/restricted-endpoints-admission.test.ts'],
    note: 'OpenShift ships no test table for it: its 36 tests here are read from its source',
  },
  'run-once-duration': {
    ported: 12,
    asUpstream: 12,
    tests: ['TestRunOnceDurationAdmit 9/9', 'TestReadConfig 1/1', 'TestRunOnceDurationConfigValidation 2/2'],
    notPorted: { why: 'TestInt64MinP (an internal helper)' },
    suite: ['test/plugins/run-once-duration.test.ts'],
  },
  // plugin/pkg/admission/runtimeclass/admission_test.go. TestValidate's and TestValidateOverhead's rows
  // run under kubernetesVersion 1.36 and 1.37 and count once each: TestValidateOverhead's table after
  // 1.36 expects no error in 4 of its 9 rows (a pod with no or an empty overhead), and each row
  // answers as the table of the version served.
  'runtime-class': {
    ported: 25,
    asUpstream: 25,
    tests: [
      'TestSetOverhead 4/4',
      'TestSetScheduling 6/6',
      'TestAdmit 3/3',
      'TestValidate 3/3',
      'TestValidateOverhead 9/9',
    ],
    notPorted: { count: 3, why: 'TestValidateInitialization: informer and client wiring a webhook does not have' },
    suite: ['test/plugins/runtime-class.test.ts'],
    note: 'TestValidateOverhead\'s rows answer as 1.36\'s table and, with `kubernetesVersion: "1.37"`, as the newer one, which admits pods with no or an empty overhead',
  },
  'storage-object-in-use-protection': {
    ported: 6,
    asUpstream: 6,
    tests: ['TestAdmit 6/6'],
    suite: ['test/plugins/storage-object-in-use-protection.test.ts'],
  },
  'taint-nodes-by-condition': {
    ported: 3,
    asUpstream: 3,
    tests: ['Test_nodeTaints 3/3'],
    suite: ['test/plugins/taint-nodes-by-condition.test.ts'],
  },
  // Rows of upstream's CEL tables, in test/plugins/validating-admission-policy-cel-upstream.test.ts
  // (one row an `it.each` row or a single-row `it`; the lists and format blocks each have one more
  // `it`, on the environment version, not counted): cel-go v0.26 cel_test.go TestOptionalValues 24,
  // ext/lists_test.go 45, ext/comprehensions_test.go 48, ext/strings_test.go 87 (85 there; the two
  // indexOf/lastIndexOf rows whose offset is past the end, which 0.26 answers -1, in
  // test/cel/optionals-literals-values.test.ts); k8s.io/apiserver/pkg/cel/library format_test.go
  // 213, ip_test.go 38, cidr_test.go 31, quantity_test.go 37, semver_test.go 33. Not counted: that
  // file's "library behaviours" (24) and "runtime errors" (5) blocks, the library test file (246
  // rows), and test/cel's other rows (73 in refused-at-creation, 84 in optionals-literals-values).
  'validating-admission-policy': {
    ported: 556,
    asUpstream: 556,
    tests: [
      "cel-go's optional values (24), lists extension (45), two-variable comprehensions (48) and strings extension (87) rows",
      "Kubernetes' format (213), ip (38), cidr (31), quantity (37) and semver (33) library rows",
    ],
    suite: [
      'test/plugins/validating-admission-policy.test.ts',
      'test/plugins/validating-admission-policy-cel-upstream.test.ts',
      'test/plugins/validating-admission-policy-cel-library.test.ts',
      'test/cel/optionals-literals-values.test.ts',
      'test/cel/refused-at-creation.test.ts',
    ],
    note: "the figure counts CEL library rows; besides them, every example of the Kubernetes 1.27 ValidatingAdmissionPolicy page is a test, and 246 more library rows from the apiextensions-apiserver's and cel-go's tests pass, as do 157 rows in test/cel on what the apiserver refuses when a policy is created and on cel-go 0.26's optionals, literals and values",
  },
};

/**
 * The figure a table cell shows: `14/14` (answered as upstream / ported), `+3 not ported` when
 * upstream counts cases left out, or the tests' number when upstream's cases are not counted.
 */
export function parityFigure(parity: Parity): string {
  if (parity.ported === undefined || parity.asUpstream === undefined)
    return parity.tests.length > 0 ? `all of ${parity.tests.length} tests` : 'no upstream table';
  const left = parity.notPorted?.count;
  return `${parity.asUpstream}/${parity.ported}${left ? ` (+${left} not ported)` : ''}`;
}
