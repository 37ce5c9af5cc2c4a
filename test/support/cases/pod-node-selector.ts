// Upstream's PodNodeSelector table (plugin/pkg/admission/podnodeselector/admission_test.go,
// TestPodAdmission), held once for the plugin's tests and the native policies' proof.

export const NODE_SELECTOR_ANNOTATION = 'scheduler.alpha.kubernetes.io/node-selector';

export interface PodAdmissionCase {
  readonly testName: string;
  readonly defaultNodeSelector: string;
  readonly namespaceNodeSelector?: string;
  /** The namespace's whitelist, in clusterNodeSelectors. */
  readonly whitelist?: string;
  readonly podNodeSelector: Readonly<Record<string, string>>;
  readonly mergedNodeSelector?: Readonly<Record<string, string>>;
  /** The namespace has no node-selector annotation at all. */
  readonly ignoreTestNamespaceNodeSelector?: boolean;
  readonly admit: boolean;
}

/** The namespace's annotations for a case: none, or its node selector ('' when the case gives none). */
export const namespaceAnnotations = (c: PodAdmissionCase): Record<string, string> | undefined =>
  c.ignoreTestNamespaceNodeSelector ? undefined : { [NODE_SELECTOR_ANNOTATION]: c.namespaceNodeSelector ?? '' };

export const POD_ADMISSION_CASES: readonly PodAdmissionCase[] = [
  {
    testName: 'No node selectors',
    defaultNodeSelector: '',
    podNodeSelector: {},
    mergedNodeSelector: {},
    ignoreTestNamespaceNodeSelector: true,
    admit: true,
  },
  {
    testName: 'Default node selector and no conflicts',
    defaultNodeSelector: 'infra = false',
    podNodeSelector: {},
    mergedNodeSelector: { infra: 'false' },
    ignoreTestNamespaceNodeSelector: true,
    admit: true,
  },
  {
    testName: 'TestNamespace node selector with whitespaces and no conflicts',
    defaultNodeSelector: '',
    namespaceNodeSelector: ' infra = false ',
    podNodeSelector: {},
    mergedNodeSelector: { infra: 'false' },
    admit: true,
  },
  {
    testName: 'Default and namespace node selector, no conflicts',
    defaultNodeSelector: 'infra = false',
    namespaceNodeSelector: 'infra=true',
    podNodeSelector: {},
    mergedNodeSelector: { infra: 'true' },
    admit: true,
  },
  {
    testName: 'Empty namespace node selector and no conflicts',
    defaultNodeSelector: 'infra = false',
    namespaceNodeSelector: '',
    podNodeSelector: {},
    mergedNodeSelector: {},
    admit: true,
  },
  {
    testName: 'TestNamespace and pod node selector, no conflicts',
    defaultNodeSelector: 'infra = false',
    namespaceNodeSelector: 'infra=true',
    podNodeSelector: { env: 'test' },
    mergedNodeSelector: { infra: 'true', env: 'test' },
    admit: true,
  },
  {
    testName: 'Conflicting pod and namespace node selector, one label',
    defaultNodeSelector: 'env = test',
    namespaceNodeSelector: 'infra=true',
    podNodeSelector: { infra: 'false' },
    admit: false,
  },
  {
    testName: 'Conflicting pod and namespace node selector, multiple labels',
    defaultNodeSelector: 'env=dev',
    namespaceNodeSelector: 'infra=false, env = test',
    podNodeSelector: { env: 'dev', color: 'blue' },
    admit: false,
  },
  {
    testName: 'Merged pod node selectors satisfy the whitelist',
    defaultNodeSelector: 'env=dev',
    namespaceNodeSelector: 'infra=false, env = dev',
    whitelist: 'env=dev, infra=false, color=blue',
    podNodeSelector: { env: 'dev', color: 'blue' },
    mergedNodeSelector: { infra: 'false', env: 'dev', color: 'blue' },
    admit: true,
  },
  {
    testName: 'Merged pod node selectors conflict with the whitelist',
    defaultNodeSelector: 'env=dev',
    namespaceNodeSelector: 'infra=false, env = dev',
    whitelist: 'env=dev, infra=true, color=blue',
    podNodeSelector: { env: 'dev', color: 'blue' },
    admit: false,
  },
];
