// Upstream's per-check tables (staging/src/k8s.io/pod-security-admission/policy/check_*_test.go
// and checks_test.go): each pod with the exact forbidden reason and detail, evaluated by the one
// check at the named version (as upstream calls the check function directly).
import { describe, expect, it } from 'vitest';
import {
  aggregateCheckResults,
  CHECKS,
  forbiddenDetail,
  forbiddenReason,
} from '../../functions/pod-security/policy/registry.js';
import type { PodMetadataLike, PodSpecLike } from '../../functions/pod-security/policy/types.js';

function checkAt(id: string, minor: number) {
  const check = CHECKS.find((c) => c.id === id)!;
  return [...check.versions].reverse().find((v) => v.minimumVersion.minor <= minor)!.checkPod;
}

interface Row {
  name: string;
  check: string;
  version: number;
  meta?: PodMetadataLike;
  spec: PodSpecLike;
  reason?: string;
  detail?: string;
}

const sc = (securityContext: object) => ({ securityContext });
const ROWS: Row[] = [
  // check_appArmorProfile_test.go TestCheckAppArmor_Allowed
  {
    name: 'container with default AppArmor + extra annotations',
    check: 'appArmorProfile',
    version: 0,
    meta: { annotations: { 'container.apparmor.security.beta.kubernetes.io/test': 'runtime/default', env: 'prod' } },
    spec: {},
  },
  {
    name: 'container with local AppArmor + extra annotations',
    check: 'appArmorProfile',
    version: 0,
    meta: {
      annotations: { 'container.apparmor.security.beta.kubernetes.io/test': 'localhost/sec-profile01', env: 'dev' },
    },
    spec: {},
  },
  {
    name: 'container with no AppArmor annotations',
    check: 'appArmorProfile',
    version: 0,
    meta: { annotations: { env: 'dev' } },
    spec: {},
  },
  { name: 'container with no annotations', check: 'appArmorProfile', version: 0, meta: {}, spec: {} },
  {
    name: 'pod with runtime default',
    check: 'appArmorProfile',
    version: 0,
    spec: sc({ appArmorProfile: { type: 'RuntimeDefault' } }),
  },
  {
    name: 'container with localhost profile',
    check: 'appArmorProfile',
    version: 0,
    spec: { containers: [{ name: 'foo', ...sc({ appArmorProfile: { type: 'RuntimeDefault' } }) }] },
  },
  // TestCheckAppArmor_Forbidden
  {
    name: 'unconfined pod',
    check: 'appArmorProfile',
    version: 0,
    spec: sc({ appArmorProfile: { type: 'Unconfined' } }),
    reason: 'forbidden AppArmor profile',
    detail: 'pod must not set AppArmor profile type to "Unconfined"',
  },
  {
    name: 'unconfined container',
    check: 'appArmorProfile',
    version: 0,
    spec: {
      ...sc({ appArmorProfile: { type: 'RuntimeDefault' } }),
      containers: [{ name: 'foo', ...sc({ appArmorProfile: { type: 'Unconfined' } }) }],
    },
    reason: 'forbidden AppArmor profile',
    detail: 'container "foo" must not set AppArmor profile type to "Unconfined"',
  },
  {
    name: 'unconfined init container',
    check: 'appArmorProfile',
    version: 0,
    spec: {
      ...sc({ appArmorProfile: { type: 'RuntimeDefault' } }),
      containers: [{ name: 'foo' }],
      initContainers: [{ name: 'bar', ...sc({ appArmorProfile: { type: 'Unconfined' } }) }],
    },
    reason: 'forbidden AppArmor profile',
    detail: 'container "bar" must not set AppArmor profile type to "Unconfined"',
  },
  {
    name: 'multiple containers (annotations)',
    check: 'appArmorProfile',
    version: 0,
    meta: {
      annotations: {
        'container.apparmor.security.beta.kubernetes.io/': 'bogus',
        'container.apparmor.security.beta.kubernetes.io/a': '',
        'container.apparmor.security.beta.kubernetes.io/b': 'runtime/default',
        'container.apparmor.security.beta.kubernetes.io/c': 'localhost/',
        'container.apparmor.security.beta.kubernetes.io/d': 'localhost/foo',
        'container.apparmor.security.beta.kubernetes.io/e': 'unconfined',
        'container.apparmor.security.beta.kubernetes.io/f': 'unknown',
      },
    },
    spec: {},
    reason: 'forbidden AppArmor profiles',
    detail:
      'annotations must not set AppArmor profile type to "container.apparmor.security.beta.kubernetes.io/="bogus"", ' +
      '"container.apparmor.security.beta.kubernetes.io/e="unconfined"", "container.apparmor.security.beta.kubernetes.io/f="unknown""',
  },
  // check_runAsNonRoot_test.go (1.35)
  {
    name: 'no explicit runAsNonRoot',
    check: 'runAsNonRoot',
    version: 35,
    spec: { containers: [{ name: 'a' }] },
    reason: 'runAsNonRoot != true',
    detail: 'pod or container "a" must set securityContext.runAsNonRoot=true',
  },
  {
    name: 'pod runAsNonRoot=false',
    check: 'runAsNonRoot',
    version: 35,
    spec: { ...sc({ runAsNonRoot: false }), containers: [{ name: 'a', securityContext: null }] },
    reason: 'runAsNonRoot != true',
    detail: 'pod must not set securityContext.runAsNonRoot=false',
  },
  {
    name: 'containers runAsNonRoot=false',
    check: 'runAsNonRoot',
    version: 35,
    spec: {
      ...sc({ runAsNonRoot: true }),
      containers: [
        { name: 'a', securityContext: null },
        { name: 'b', securityContext: {} },
        { name: 'c', ...sc({ runAsNonRoot: false }) },
        { name: 'd', ...sc({ runAsNonRoot: false }) },
        { name: 'e', ...sc({ runAsNonRoot: true }) },
        { name: 'f', ...sc({ runAsNonRoot: true }) },
      ],
    },
    reason: 'runAsNonRoot != true',
    detail: 'containers "c", "d" must not set securityContext.runAsNonRoot=false',
  },
  {
    name: 'pod nil, container fallthrough',
    check: 'runAsNonRoot',
    version: 35,
    spec: {
      containers: [
        { name: 'a', securityContext: null },
        { name: 'b', securityContext: {} },
        { name: 'd', ...sc({ runAsNonRoot: true }) },
        { name: 'e', ...sc({ runAsNonRoot: true }) },
      ],
    },
    reason: 'runAsNonRoot != true',
    detail: 'pod or containers "a", "b" must set securityContext.runAsNonRoot=true',
  },
  { name: 'host users false allowed', check: 'runAsNonRoot', version: 35, spec: { hostUsers: false } },
  // check_seccompProfile_restricted_test.go
  {
    name: 'no explicit seccomp',
    check: 'seccompProfile_restricted',
    version: 19,
    spec: { containers: [{ name: 'a' }] },
    reason: 'seccompProfile',
    detail: 'pod or container "a" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"',
  },
  {
    name: 'pod seccomp invalid',
    check: 'seccompProfile_restricted',
    version: 19,
    spec: { ...sc({ seccompProfile: { type: 'Unconfined' } }), containers: [{ name: 'a', securityContext: null }] },
    reason: 'seccompProfile',
    detail: 'pod must not set securityContext.seccompProfile.type to "Unconfined"',
  },
  {
    name: 'containers seccomp invalid',
    check: 'seccompProfile_restricted',
    version: 19,
    spec: {
      ...sc({ seccompProfile: { type: 'RuntimeDefault' } }),
      containers: [
        { name: 'a', securityContext: null },
        { name: 'b', securityContext: {} },
        { name: 'c', ...sc({ seccompProfile: { type: 'Unconfined' } }) },
        { name: 'd', ...sc({ seccompProfile: { type: 'Unconfined' } }) },
        { name: 'e', ...sc({ seccompProfile: { type: 'RuntimeDefault' } }) },
        { name: 'f', ...sc({ seccompProfile: { type: 'RuntimeDefault' } }) },
      ],
    },
    reason: 'seccompProfile',
    detail: 'containers "c", "d" must not set securityContext.seccompProfile.type to "Unconfined"',
  },
  {
    name: 'seccomp: pod nil, container fallthrough',
    check: 'seccompProfile_restricted',
    version: 19,
    spec: {
      containers: [
        { name: 'a', securityContext: null },
        { name: 'b', securityContext: {} },
        { name: 'd', ...sc({ seccompProfile: { type: 'RuntimeDefault' } }) },
        { name: 'e', ...sc({ seccompProfile: { type: 'RuntimeDefault' } }) },
      ],
    },
    reason: 'seccompProfile',
    detail:
      'pod or containers "a", "b" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"',
  },
  // check_capabilities_restricted_test.go
  {
    name: 'capabilities: multiple containers',
    check: 'capabilities_restricted',
    version: 22,
    spec: {
      containers: [
        { name: 'a', ...sc({ capabilities: { add: ['FOO', 'BAR'] } }) },
        { name: 'b', ...sc({ capabilities: { add: ['BAR', 'BAZ'] } }) },
        { name: 'c', ...sc({ capabilities: { add: ['NET_BIND_SERVICE', 'CHOWN'], drop: ['ALL', 'FOO'] } }) },
      ],
    },
    reason: 'unrestricted capabilities',
    detail:
      'containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; containers "a", "b", "c" must not include "BAR", "BAZ", "CHOWN", "FOO" in securityContext.capabilities.add',
  },
  // check_hostPorts_test.go
  {
    name: 'one container, one host port',
    check: 'hostPorts',
    version: 0,
    spec: {
      containers: [
        { name: 'a', ports: [{ hostPort: 0 }] },
        { name: 'b', ports: [{ hostPort: 0 }, { hostPort: 20 }] },
      ],
    },
    reason: 'hostPort',
    detail: 'container "b" uses hostPort 20',
  },
  {
    name: 'multiple containers, multiple host port',
    check: 'hostPorts',
    version: 0,
    spec: {
      containers: [
        { name: 'a', ports: [{ hostPort: 0 }] },
        { name: 'b', ports: [{ hostPort: 0 }, { hostPort: 10 }, { hostPort: 20 }] },
        { name: 'c', ports: [{ hostPort: 0 }, { hostPort: 10 }, { hostPort: 30 }] },
      ],
    },
    reason: 'hostPort',
    detail: 'containers "b", "c" use hostPorts 10, 20, 30',
  },
  // check_restrictedVolumes_test.go
  {
    name: 'host path volumes',
    check: 'restrictedVolumes',
    version: 0,
    spec: {
      volumes: [
        ...[
          'emptyDir',
          'secret',
          'persistentVolumeClaim',
          'downwardAPI',
          'configMap',
          'projected',
          'csi',
          'ephemeral',
          'image',
        ].map((source, i) => ({ name: `a${i + 1}`, [source]: {} })),
        ...[
          'hostPath',
          'gcePersistentDisk',
          'awsElasticBlockStore',
          'gitRepo',
          'nfs',
          'iscsi',
          'glusterfs',
          'rbd',
          'flexVolume',
          'cinder',
          'cephfs',
          'flocker',
          'fc',
          'azureFile',
          'vsphereVolume',
          'quobyte',
          'azureDisk',
          'photonPersistentDisk',
          'portworxVolume',
          'scaleIO',
          'storageos',
        ].map((source, i) => ({ name: `b${i + 1}`, [source]: {} })),
        { name: 'c1' },
      ],
    },
    reason: 'restricted volume types',
    detail:
      'volumes "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9", "b10", "b11", "b12", "b13", "b14", "b15", "b16", "b17", "b18", "b19", "b20", "b21", "c1"' +
      ' use restricted volume types ' +
      '"awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "fc", "flexVolume", "flocker", "gcePersistentDisk", "gitRepo", "glusterfs", ' +
      '"hostPath", "iscsi", "nfs", "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos", "unknown", "vsphereVolume"',
  },
  // check_seLinuxOptions_test.go (1.31)
  {
    name: 'invalid pod and containers',
    check: 'seLinuxOptions',
    version: 31,
    spec: {
      ...sc({ seLinuxOptions: { type: 'foo', user: 'bar', role: 'baz' } }),
      containers: [
        { name: 'a', ...sc({ seLinuxOptions: { type: 'container_t' } }) },
        { name: 'b', ...sc({ seLinuxOptions: { type: 'container_init_t' } }) },
        { name: 'c', ...sc({ seLinuxOptions: { type: 'container_kvm_t' } }) },
        { name: 'd', ...sc({ seLinuxOptions: { type: 'container_engine_t' } }) },
        { name: 'e', ...sc({ seLinuxOptions: { type: 'bar' } }) },
        { name: 'f', ...sc({ seLinuxOptions: { user: 'bar' } }) },
        { name: 'g', ...sc({ seLinuxOptions: { role: 'baz' } }) },
      ],
    },
    reason: 'seLinuxOptions',
    detail:
      'pod and containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: types "bar", "foo"; user may not be set; role may not be set',
  },
  {
    name: 'invalid pod',
    check: 'seLinuxOptions',
    version: 31,
    spec: {
      ...sc({ seLinuxOptions: { type: 'foo', user: 'bar', role: 'baz' } }),
      containers: ['container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t'].map((type, i) => ({
        name: 'abcd'[i],
        ...sc({ seLinuxOptions: { type } }),
      })),
    },
    reason: 'seLinuxOptions',
    detail: 'pod set forbidden securityContext.seLinuxOptions: type "foo"; user may not be set; role may not be set',
  },
  {
    name: 'invalid containers',
    check: 'seLinuxOptions',
    version: 31,
    spec: {
      ...sc({ seLinuxOptions: {} }),
      containers: [
        ...['container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t'].map((type, i) => ({
          name: 'abcd'[i],
          ...sc({ seLinuxOptions: { type } }),
        })),
        { name: 'e', ...sc({ seLinuxOptions: { type: 'bar' } }) },
        { name: 'f', ...sc({ seLinuxOptions: { user: 'bar' } }) },
        { name: 'g', ...sc({ seLinuxOptions: { role: 'baz' } }) },
      ],
    },
    reason: 'seLinuxOptions',
    detail:
      'containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: type "bar"; user may not be set; role may not be set',
  },
  {
    name: 'bad type',
    check: 'seLinuxOptions',
    version: 31,
    spec: sc({ seLinuxOptions: { type: 'bad' } }),
    reason: 'seLinuxOptions',
    detail: 'pod set forbidden securityContext.seLinuxOptions: type "bad"',
  },
  {
    name: 'bad user',
    check: 'seLinuxOptions',
    version: 31,
    spec: sc({ seLinuxOptions: { user: 'bad' } }),
    reason: 'seLinuxOptions',
    detail: 'pod set forbidden securityContext.seLinuxOptions: user may not be set',
  },
  {
    name: 'bad role',
    check: 'seLinuxOptions',
    version: 31,
    spec: sc({ seLinuxOptions: { role: 'bad' } }),
    reason: 'seLinuxOptions',
    detail: 'pod set forbidden securityContext.seLinuxOptions: role may not be set',
  },
  {
    name: 'container_engine_t before 1.31',
    check: 'seLinuxOptions',
    version: 30,
    spec: sc({ seLinuxOptions: { type: 'container_engine_t' } }),
    reason: 'seLinuxOptions',
    detail: 'pod set forbidden securityContext.seLinuxOptions: type "container_engine_t"',
  },
  // check_privileged_test.go, check_windowsHostProcess_test.go, check_capabilities_baseline_test.go, check_hostNamespaces_test.go
  {
    name: 'privileged',
    check: 'privileged',
    version: 0,
    spec: {
      containers: [
        { name: 'a', securityContext: null },
        { name: 'b', securityContext: {} },
        { name: 'c', ...sc({ privileged: false }) },
        { name: 'd', ...sc({ privileged: true }) },
        { name: 'e', ...sc({ privileged: true }) },
      ],
    },
    reason: 'privileged',
    detail: 'containers "d", "e" must not set securityContext.privileged=true',
  },
  {
    name: 'host process',
    check: 'windowsHostProcess',
    version: 0,
    spec: {
      ...sc({ windowsOptions: { hostProcess: true } }),
      containers: [
        { name: 'a', securityContext: null },
        { name: 'b', securityContext: {} },
        { name: 'c', ...sc({ windowsOptions: {} }) },
        { name: 'd', ...sc({ windowsOptions: { hostProcess: false } }) },
        { name: 'e', ...sc({ windowsOptions: { hostProcess: true } }) },
        { name: 'f', ...sc({ windowsOptions: { hostProcess: true } }) },
      ],
    },
    reason: 'hostProcess',
    detail: 'pod and containers "e", "f" must not set securityContext.windowsOptions.hostProcess=true',
  },
  {
    name: 'non-default capabilities, multiple containers',
    check: 'capabilities_baseline',
    version: 0,
    spec: {
      containers: [
        { name: 'a', ...sc({ capabilities: { add: ['FOO', 'BAR'] } }) },
        { name: 'b', ...sc({ capabilities: { add: ['BAR', 'BAZ'] } }) },
      ],
    },
    reason: 'non-default capabilities',
    detail: 'containers "a", "b" must not include "BAR", "BAZ", "FOO" in securityContext.capabilities.add',
  },
  {
    name: 'multiple host namespaces',
    check: 'hostNamespaces',
    version: 0,
    spec: { hostNetwork: true, hostIPC: true, hostPID: true },
    reason: 'host namespaces',
    detail: 'hostNetwork=true, hostPID=true, hostIPC=true',
  },
  // check_procMount_test.go: the baseline from 1.35, in and out of a user namespace
  ...[true, false].map(
    (hostUsers): Row => ({
      name: `procMount, hostUsers=${hostUsers}`,
      check: 'procMount',
      version: 35,
      spec: {
        hostUsers,
        containers: [
          { name: 'a', securityContext: null },
          { name: 'b', securityContext: {} },
          { name: 'c', ...sc({ procMount: 'Default' }) },
          { name: 'd', ...sc({ procMount: 'Unmasked' }) },
          { name: 'e', ...sc({ procMount: 'other' }) },
        ],
      },
      ...(hostUsers && {
        reason: 'procMount',
        detail: 'containers "d", "e" must not set securityContext.procMount to "Unmasked", "other"',
      }),
    }),
  ),
  // check_runAsUser_test.go (1.35)
  {
    name: 'pod runAsUser=0',
    check: 'runAsUser',
    version: 35,
    spec: { ...sc({ runAsUser: 0 }), containers: [{ name: 'a', securityContext: null }] },
    reason: 'runAsUser=0',
    detail: 'pod must not set runAsUser=0',
  },
  {
    name: 'pod runAsUser=non-zero',
    check: 'runAsUser',
    version: 35,
    spec: { ...sc({ runAsUser: 1000 }), containers: [{ name: 'a', securityContext: null }] },
  },
  {
    name: 'pod runAsUser=nil',
    check: 'runAsUser',
    version: 35,
    spec: { ...sc({ runAsUser: null }), containers: [{ name: 'a', securityContext: null }] },
  },
  {
    name: 'containers runAsUser=0',
    check: 'runAsUser',
    version: 35,
    spec: {
      ...sc({ runAsUser: 1000 }),
      containers: [
        { name: 'a', securityContext: null },
        { name: 'b', securityContext: {} },
        { name: 'c', ...sc({ runAsUser: 0 }) },
        { name: 'd', ...sc({ runAsUser: 0 }) },
        { name: 'e', ...sc({ runAsUser: 1 }) },
        { name: 'f', ...sc({ runAsUser: 1 }) },
      ],
    },
    reason: 'runAsUser=0',
    detail: 'containers "c", "d" must not set runAsUser=0',
  },
  {
    name: 'containers runAsUser=non-zero',
    check: 'runAsUser',
    version: 35,
    spec: { containers: ['c', 'd', 'e', 'f'].map((name, i) => ({ name, ...sc({ runAsUser: i + 1 }) })) },
  },
  { name: 'user namespace without runAsUser', check: 'runAsUser', version: 35, spec: { hostUsers: false } },
  {
    name: 'host users with runAsUser=0',
    check: 'runAsUser',
    version: 35,
    spec: { hostUsers: true, ...sc({ runAsUser: 0 }), containers: [{ name: 'a', securityContext: null }] },
    reason: 'runAsUser=0',
    detail: 'pod must not set runAsUser=0',
  },
  // check_sysctls_test.go
  {
    name: 'forbidden sysctls (1.0)',
    check: 'sysctls',
    version: 0,
    spec: sc({ sysctls: [{ name: 'a' }, { name: 'b' }] }),
    reason: 'forbidden sysctls',
    detail: 'a, b',
  },
  {
    name: 'new supported sysctls not supported (1.0)',
    check: 'sysctls',
    version: 0,
    spec: sc({ sysctls: [{ name: 'net.ipv4.ip_local_reserved_ports', value: '1024-4999' }] }),
    reason: 'forbidden sysctls',
    detail: 'net.ipv4.ip_local_reserved_ports',
  },
  {
    name: 'forbidden sysctls (1.27)',
    check: 'sysctls',
    version: 27,
    spec: sc({ sysctls: [{ name: 'a' }, { name: 'b' }] }),
    reason: 'forbidden sysctls',
    detail: 'a, b',
  },
  {
    name: 'new supported sysctls (1.27)',
    check: 'sysctls',
    version: 27,
    spec: sc({ sysctls: [{ name: 'net.ipv4.ip_local_reserved_ports', value: '1024-4999' }] }),
  },
];

describe('upstream check tables', () => {
  it.each(ROWS)('$check v1.$version: $name', (row) => {
    const result = checkAt(row.check, row.version)(row.meta ?? {}, row.spec);
    if (row.reason === undefined) {
      expect(result.allowed).toBe(true);
      return;
    }
    expect(result.allowed).toBe(false);
    expect(result.forbiddenReason).toBe(row.reason);
    expect(result.forbiddenDetail).toBe(row.detail);
  });
});

describe('checks_test.go: aggregation', () => {
  it('joins reasons, puts details in parentheses, and names a reasonless refusal', () => {
    const result = aggregateCheckResults([
      { allowed: true },
      { allowed: false, forbiddenReason: 'host ports', forbiddenDetail: '8080, 9090' },
      { allowed: false, forbiddenReason: 'privileged containers' },
      { allowed: false, forbiddenDetail: 'x' },
    ]);
    expect(result.allowed).toBe(false);
    expect(forbiddenReason(result)).toBe('host ports, privileged containers, unknown forbidden reason');
    expect(forbiddenDetail(result)).toBe(
      'host ports (8080, 9090), privileged containers, unknown forbidden reason (x)',
    );
    expect(aggregateCheckResults([{ allowed: true }]).allowed).toBe(true);
  });
});
