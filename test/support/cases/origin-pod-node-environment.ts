// OpenShift's OriginPodNodeEnvironment tables (openshift/kubernetes openshift-kube-apiserver/
// admission/scheduler/nodeenv/admission_test.go TestPodAdmission, nodeenv/labelselector/
// labelselector_test.go TestLabelSelectorParse), held once for the plugin's tests and the native
// policies' proof. Upstream's lister holds one Node, worker-1 labelled worker=true.

export const PROJECT_NODE_SELECTOR_ANNOTATION = 'openshift.io/node-selector';

/** The project's annotations for a case: none, or its node selector ('' when the case gives none). */
export const projectAnnotations = (c: PodAdmissionCase): Record<string, string> | undefined =>
  c.ignoreProjectNodeSelector ? undefined : { [PROJECT_NODE_SELECTOR_ANNOTATION]: c.projectNodeSelector ?? '' };

export interface PodAdmissionCase {
  readonly testName: string;
  readonly defaultNodeSelector: string;
  readonly projectNodeSelector?: string;
  readonly podNodeSelector?: Readonly<Record<string, string>>;
  readonly podNodeName?: string;
  readonly mergedNodeSelector: Readonly<Record<string, string>>;
  readonly ignoreProjectNodeSelector?: boolean;
  readonly admit: boolean;
  /** Where the webhook answers otherwise than upstream, and why. */
  readonly differs?: string;
}

export const POD_ADMISSION_CASES: readonly PodAdmissionCase[] = [
  {
    testName: 'No node selectors',
    defaultNodeSelector: '',
    podNodeSelector: {},
    mergedNodeSelector: {},
    ignoreProjectNodeSelector: true,
    admit: true,
  },
  {
    testName: 'Default node selector and no conflicts',
    defaultNodeSelector: 'infra = false',
    podNodeSelector: {},
    mergedNodeSelector: { infra: 'false' },
    ignoreProjectNodeSelector: true,
    admit: true,
  },
  {
    testName: 'Project node selector and no conflicts',
    defaultNodeSelector: '',
    projectNodeSelector: 'infra = false',
    podNodeSelector: {},
    mergedNodeSelector: { infra: 'false' },
    admit: true,
  },
  {
    testName: 'Empty project node selector and no conflicts',
    defaultNodeSelector: 'infra = false',
    projectNodeSelector: '',
    podNodeSelector: {},
    mergedNodeSelector: {},
    admit: true,
  },
  {
    testName: 'Default and project node selector, no conflicts',
    defaultNodeSelector: 'infra = false',
    projectNodeSelector: 'infra=true',
    podNodeSelector: {},
    mergedNodeSelector: { infra: 'true' },
    admit: true,
  },
  {
    testName: 'Project and pod node selector, no conflicts',
    defaultNodeSelector: 'infra = false',
    projectNodeSelector: 'infra=true',
    podNodeSelector: { env: 'test' },
    mergedNodeSelector: { infra: 'true', env: 'test' },
    admit: true,
  },
  {
    testName: 'Conflicting pod and project node selector, one label',
    defaultNodeSelector: 'env = test',
    projectNodeSelector: 'infra=true',
    podNodeSelector: { infra: 'false' },
    mergedNodeSelector: { infra: 'false' },
    admit: false,
  },
  {
    testName: 'Conflicting pod and project node selector, multiple labels',
    defaultNodeSelector: 'env=dev',
    projectNodeSelector: 'infra=false, env = test',
    podNodeSelector: { env: 'dev', color: 'blue' },
    mergedNodeSelector: { env: 'dev', color: 'blue' },
    admit: false,
  },
  {
    testName: 'node referenced in pod.nodeName does not conflict with project node selector',
    defaultNodeSelector: '',
    projectNodeSelector: 'worker=true',
    podNodeName: 'worker-1',
    mergedNodeSelector: { worker: 'true' },
    admit: true,
  },
  {
    testName:
      'node referenced in pod spec.nodeName can conflict with its own node selector when no project node selector is specified',
    defaultNodeSelector: '',
    projectNodeSelector: '',
    podNodeName: 'worker-1',
    podNodeSelector: { worker: 'false' },
    mergedNodeSelector: { worker: 'false' },
    admit: true,
  },
  {
    testName: 'node referenced in pod spec.nodeName conflicts with project node selector',
    defaultNodeSelector: 'worker = true',
    projectNodeSelector: 'worker=false',
    podNodeName: 'worker-1',
    mergedNodeSelector: {},
    admit: false,
  },
  {
    testName: 'missing node referenced in pod spec.nodeName does not admit',
    defaultNodeSelector: '',
    projectNodeSelector: 'worker=true',
    podNodeName: 'worker-2',
    mergedNodeSelector: { worker: 'true' },
    admit: true,
    differs:
      'a node never learned is only not learned yet here (upstream: not found): admitted, merged and warned, never refused',
  },
];

/** TestLabelSelectorParse: [selector, labels, valid]. */
export const LABEL_SELECTOR_PARSE_CASES: readonly (readonly [string, Readonly<Record<string, string>>, boolean])[] = [
  ['', {}, true],
  ['   ', {}, true],
  ['x=a', { x: 'a' }, true],
  ['x=a,y=b,z=c', { x: 'a', y: 'b', z: 'c' }, true],
  ['x = a, y=b ,z  = c  ', { x: 'a', y: 'b', z: 'c' }, true],
  ['color=green, env = test ,service= front ', { color: 'green', env: 'test', service: 'front' }, true],
  [',', {}, false],
  ['x', {}, false],
  ['x,y', {}, false],
  ['x=$y', {}, false],
  ['x!=y', {}, false],
  ['x==y', {}, false],
  ['x=a||y=b', {}, false],
  ['x in (y)', {}, false],
  ['x notin (y)', {}, false],
  ['x y', {}, false],
  ['node-role.kubernetes.io/infra=', { 'node-role.kubernetes.io/infra': '' }, true],
];
