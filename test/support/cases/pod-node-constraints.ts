// OpenShift's PodNodeConstraints table (openshift/kubernetes openshift-kube-apiserver/admission/
// scheduler/podnodeconstraints/admission_test.go, TestPodNodeConstraints), held once for the
// plugin's tests and the native policies' proof. Its fake authorizer lets one service account
// create pods/binding; each suite builds its pods around the specs and annotations here.
import type { UserInfo } from '../../../lib/admission/types.js';

/** The one user OpenShift's fake authorizer lets create pods/binding. */
export const BINDER = 'system:serviceaccount:openshift-infra:daemonset-controller';

/** serviceaccount.UserInfo(namespace, name, uid). */
export const serviceAccount = (namespace: string, name: string): UserInfo => ({
  username: `system:serviceaccount:${namespace}:${name}`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
});
/** A node's own user. */
export const nodeUser = (name: string): UserInfo => ({ username: `system:node:${name}`, groups: ['system:nodes'] });

export interface PodShape {
  readonly spec: Record<string, unknown>;
  readonly annotations?: Record<string, string>;
}

/** Upstream's pods: defaultPod(), nodeNamePod()... */
export const PODS = {
  defaultPod: { spec: {} },
  nodeNameNodeSelectorPod: { spec: { nodeName: 'frank', nodeSelector: { bogus: 'frank' } } },
  nodeNamePod: { spec: { nodeName: 'frank' } },
  nodeNameMirrorPod: { spec: { nodeName: 'frank' }, annotations: { 'kubernetes.io/config.mirror': 'true' } },
  nodeSelectorPod: { spec: { nodeSelector: { bogus: 'frank' } } },
} satisfies Record<string, PodShape>;

export interface PodNodeConstraintsCase {
  readonly n: number;
  readonly name: string;
  /**
   * Upstream's configuration: emptyConfig() (no blacklisted label), testConfig() (the label
   * `bogus`), nilConfig() (no entry: the plugin is off).
   */
  readonly config: 'empty' | 'test' | 'nil';
  readonly pod: PodShape;
  readonly userinfo: UserInfo;
  /** '' for none. */
  readonly expectedErrorMsg: string;
}

export const POD_NODE_CONSTRAINTS_CASES: readonly PodNodeConstraintsCase[] = [
  {
    n: 0,
    name: 'expect unspecified defaults to not error',
    config: 'empty',
    pod: PODS.defaultPod,
    userinfo: serviceAccount('', ''),
    expectedErrorMsg: '',
  },
  {
    n: 1,
    name: 'expect nodeSelector to error with user which lacks "pods/binding" access',
    config: 'test',
    pod: PODS.nodeSelectorPod,
    userinfo: serviceAccount('', ''),
    expectedErrorMsg: 'node selection by label(s) [bogus] is prohibited by policy for your role',
  },
  {
    n: 2,
    name: 'expect nodeName to fail with user that lacks "pods/binding" access',
    config: 'test',
    pod: PODS.nodeNamePod,
    userinfo: serviceAccount('herpy', 'derpy'),
    expectedErrorMsg: 'node selection by nodeName is prohibited by policy for your role',
  },
  {
    n: 3,
    name: 'expect nodeName and nodeSelector to fail with user that lacks "pods/binding" access',
    config: 'test',
    pod: PODS.nodeNameNodeSelectorPod,
    userinfo: serviceAccount('herpy', 'derpy'),
    expectedErrorMsg: 'node selection by nodeName and label(s) [bogus] is prohibited by policy for your role',
  },
  {
    n: 4,
    name: 'expect nodeSelector to succeed with user that has "pods/binding" access',
    config: 'test',
    pod: PODS.nodeSelectorPod,
    userinfo: serviceAccount('openshift-infra', 'daemonset-controller'),
    expectedErrorMsg: '',
  },
  {
    n: 5,
    name: 'expect nodeName to succeed with user that has "pods/binding" access',
    config: 'test',
    pod: PODS.nodeNamePod,
    userinfo: serviceAccount('openshift-infra', 'daemonset-controller'),
    expectedErrorMsg: '',
  },
  {
    n: 6,
    name: 'expect nil config to bypass admission',
    config: 'nil',
    pod: PODS.defaultPod,
    userinfo: serviceAccount('', ''),
    expectedErrorMsg: '',
  },
  {
    n: 7,
    name: 'expect nodeName to succeed with node user self targeting mirror pod',
    config: 'test',
    pod: PODS.nodeNameMirrorPod,
    userinfo: nodeUser('frank'),
    expectedErrorMsg: '',
  },
  {
    n: 8,
    name: 'expect nodeName to fail with node user self targeting non-mirror pod',
    config: 'test',
    pod: PODS.nodeNamePod,
    userinfo: nodeUser('frank'),
    expectedErrorMsg: 'node selection by nodeName is prohibited by policy for your role',
  },
  {
    n: 9,
    name: 'expect nodeName to fail with node user non-self targeting mirror pod',
    config: 'test',
    pod: PODS.nodeNameMirrorPod,
    userinfo: nodeUser('bob'),
    expectedErrorMsg: 'node selection by nodeName is prohibited by policy for your role',
  },
  {
    n: 10,
    name: 'expect nodeName to fail with node user non-self targeting non-mirror pod',
    config: 'test',
    pod: PODS.nodeNamePod,
    userinfo: nodeUser('bob'),
    expectedErrorMsg: 'node selection by nodeName is prohibited by policy for your role',
  },
];
