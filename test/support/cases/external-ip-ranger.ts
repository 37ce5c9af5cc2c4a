// OpenShift's ExternalIPRanger table (openshift/kubernetes openshift-kube-apiserver/admission/
// network/externalipranger/externalip_admission_test.go, TestAdmission), held once for the plugin's
// tests and the native policies' proof. Its fake authorizer lets system:serviceaccount:test:admin
// set any external IP; the webhook names that account in allowedUsers instead.
import type { Operation, UserInfo } from '../../../lib/admission/types.js';

/** The one user OpenShift's fake authorizer allows. */
export const ADMIN = 'system:serviceaccount:test:admin';

/** serviceaccount.UserInfo("test", name, ""). */
export const serviceAccount = (name: string): UserInfo => ({
  username: `system:serviceaccount:test:${name}`,
  groups: ['system:serviceaccounts', 'system:serviceaccounts:test'],
});

export const IPV4 = '172.0.0.0/16';
export const IPV4_SUBSET = '172.0.1.0/24';
const IPV4_OFFSET = '172.200.0.0/24';
const NONE = '0.0.0.0/32';
const ALL = '0.0.0.0/0';

export interface AdmissionCase {
  readonly testName: string;
  readonly rejects?: readonly string[];
  readonly admits?: readonly string[];
  readonly op: Operation;
  readonly externalIPs?: readonly string[];
  readonly admit: boolean;
  /** What OpenShift's errFn looks for in the error. */
  readonly errContains?: readonly string[];
  readonly loadBalancer?: boolean;
  readonly ingressIP?: string;
  /** The service account making the request (serviceAccount). */
  readonly user: string;
}

/**
 * The ExternalIPRangerAdmissionConfig a case runs under: its CIDRs (a leading ! rejects), ingress
 * IPs allowed where the case has one, and the users and groups that stand in for the authorizer.
 */
export function rangerConfig(
  c: Pick<AdmissionCase, 'rejects' | 'admits' | 'ingressIP' | 'loadBalancer'>,
  allowlist: { readonly allowedUsers: readonly string[]; readonly allowedGroups?: readonly string[] },
) {
  return {
    apiVersion: 'network.openshift.io/v1',
    kind: 'ExternalIPRangerAdmissionConfig',
    externalIPNetworkCIDRs: [...(c.rejects ?? []).map((r) => `!${r}`), ...(c.admits ?? [])],
    allowIngressIP: (c.ingressIP ?? '') !== '' || c.loadBalancer === true,
    ...allowlist,
  };
}

export const ADMISSION_CASES: readonly AdmissionCase[] = [
  {
    admit: true,
    op: 'CREATE',
    testName: 'No external IPs on create for test:ordinary-user user',
    user: 'ordinary-user',
  },
  { admit: true, op: 'UPDATE', testName: 'No external IPs on update for test:admin user', user: 'ordinary-user' },
  {
    admit: false,
    externalIPs: ['1.2.3.4'],
    op: 'CREATE',
    testName: 'No external IPs allowed on create for test:ordinary-user user',
    errContains: ['externalIPs have been disabled'],
    user: 'ordinary-user',
  },
  {
    admit: true,
    externalIPs: ['1.2.3.4'],
    op: 'CREATE',
    testName: 'External IPs allowed on create for test:admin user',
    user: 'admin',
  },
  {
    admit: false,
    externalIPs: ['1.2.3.4'],
    op: 'UPDATE',
    testName: 'No external IPs allowed on update',
    errContains: ['externalIPs have been disabled'],
    user: 'ordinary-user',
  },
  {
    admit: true,
    externalIPs: ['1.2.3.4'],
    op: 'UPDATE',
    testName: 'External IPs allowed on update for test:admin user',
    user: 'admin',
  },
  {
    admit: false,
    admits: [IPV4],
    externalIPs: ['1.2.3.4'],
    op: 'CREATE',
    testName: 'IP out of range on create',
    errContains: ['externalIP is not allowed', 'spec.externalIPs[0]'],
    user: 'ordinary-user',
  },
  {
    admit: true,
    rejects: [IPV4],
    externalIPs: ['1.2.3.4'],
    op: 'CREATE',
    testName: 'IP not in reject range on create and admits is empty',
    user: 'ordinary-user',
  },
  {
    admit: false,
    admits: [IPV4],
    externalIPs: ['1.2.3.4'],
    op: 'UPDATE',
    testName: 'IP out of range on update',
    errContains: ['externalIP is not allowed', 'spec.externalIPs[0]'],
    user: 'ordinary-user',
  },
  {
    admit: false,
    admits: [IPV4],
    rejects: [IPV4_SUBSET],
    externalIPs: ['172.0.1.1'],
    op: 'UPDATE',
    testName: 'IP out of range due to blacklist',
    errContains: ['externalIP is not allowed', 'spec.externalIPs[0]'],
    user: 'ordinary-user',
  },
  {
    admit: false,
    admits: [IPV4],
    rejects: [IPV4_OFFSET],
    externalIPs: ['172.199.1.1'],
    op: 'UPDATE',
    testName: 'IP not in reject or admit',
    errContains: ['externalIP is not allowed', 'spec.externalIPs[0]'],
    user: 'ordinary-user',
  },
  {
    admit: true,
    admits: [IPV4],
    externalIPs: ['172.0.0.1'],
    op: 'CREATE',
    testName: 'IP in range on create for test:ordinary-user user',
    user: 'ordinary-user',
  },
  {
    admit: true,
    admits: [IPV4],
    externalIPs: ['172.0.0.1'],
    op: 'UPDATE',
    testName: 'IP in range on update for test:admin user',
    user: 'admin',
  },
  {
    admit: false,
    admits: [IPV4],
    externalIPs: ['abcd'],
    op: 'CREATE',
    testName: 'IP unparseable on create',
    errContains: ['externalIPs must be a valid address', 'spec.externalIPs[0]'],
    user: 'ordinary-user',
  },
  {
    admit: false,
    admits: [NONE],
    externalIPs: ['1.2.3.4'],
    op: 'CREATE',
    testName: 'IP range is empty for test:ordinary-user user',
    errContains: ['externalIP is not allowed'],
    user: 'ordinary-user',
  },
  {
    admit: true,
    admits: [NONE],
    externalIPs: ['1.2.3.4'],
    op: 'CREATE',
    testName: 'IP range is empty, but test:admin user allowed',
    user: 'admin',
  },
  {
    admit: false,
    rejects: [ALL],
    admits: [ALL],
    externalIPs: ['1.2.3.4'],
    op: 'CREATE',
    testName: 'rejections can cover the entire range',
    user: 'ordinary-user',
  },
  {
    admit: true,
    externalIPs: ['1.2.3.4'],
    op: 'UPDATE',
    testName: 'Ingress ip allowed when external ips are disabled',
    loadBalancer: true,
    ingressIP: '1.2.3.4',
    user: 'ordinary-user',
  },
  {
    admit: true,
    admits: [IPV4],
    externalIPs: ['1.2.3.4', '172.0.0.1'],
    op: 'UPDATE',
    testName: 'Ingress ip allowed when external ips are enabled',
    loadBalancer: true,
    ingressIP: '1.2.3.4',
    user: 'admin',
  },
  {
    admit: false,
    admits: [IPV4],
    externalIPs: ['1.2.3.4', '172.0.0.1'],
    op: 'UPDATE',
    testName: 'Ingress ip not allowed for non-lb service',
    loadBalancer: false,
    ingressIP: '1.2.3.4',
    user: 'ordinary-user',
  },
];
