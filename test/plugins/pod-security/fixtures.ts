// Upstream's systematic pass/fail variants (staging/src/k8s.io/pod-security-admission/test:
// fixtures.go and fixtures_<check>.go), ported as data: for every check, level and policy version,
// pods derived from the minimal valid pod of that level and version that must pass, and pods that
// must fail with the check's message. Pods are written as the webhook receives them, after the
// apiserver's defaulting (a volume without a source is an emptyDir).
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export type Pod = Json;

export function tweak(pod: Pod, change: (p: Pod) => void): Pod {
  const copy = structuredClone(pod);
  change(copy);
  return copy;
}

/** fixtures.go minimalValidPods: baseline 1.0; restricted 1.0, 1.8, 1.19, 1.22. */
const baseline1_0: Pod = {
  metadata: {},
  spec: {
    initContainers: [{ name: 'initcontainer1', image: 'k8s.gcr.io/pause' }],
    containers: [{ name: 'container1', image: 'k8s.gcr.io/pause' }],
  },
};
const restricted1_0 = tweak(baseline1_0, (p) => (p.spec.securityContext = { runAsNonRoot: true }));
const restricted1_8 = tweak(restricted1_0, (p) => {
  p.spec.containers[0].securityContext = { allowPrivilegeEscalation: false };
  p.spec.initContainers[0].securityContext = { allowPrivilegeEscalation: false };
});
const restricted1_19 = tweak(
  restricted1_8,
  (p) => (p.spec.securityContext.seccompProfile = { type: 'RuntimeDefault' }),
);
const restricted1_22 = tweak(restricted1_19, (p) => {
  p.spec.containers[0].securityContext.capabilities = { drop: ['ALL'] };
  p.spec.initContainers[0].securityContext.capabilities = { drop: ['ALL'] };
});

export function minimalValidPod(level: 'baseline' | 'restricted', minor: number): Pod {
  if (level === 'baseline') return structuredClone(baseline1_0);
  const byVersion: [number, Pod][] = [
    [22, restricted1_22],
    [19, restricted1_19],
    [8, restricted1_8],
    [0, restricted1_0],
  ];
  return structuredClone(byVersion.find(([v]) => minor >= v)![1]);
}

function ensureSecurityContext(p: Pod): Pod {
  return tweak(p, (q) => {
    q.spec.securityContext ??= {};
    q.spec.containers[0].securityContext ??= {};
    q.spec.initContainers[0].securityContext ??= {};
  });
}

/** ensureCapabilities: a capabilities object on the first container and init container. */
function ensureCapabilities(p: Pod): Pod {
  return tweak(ensureSecurityContext(p), (q) => {
    q.spec.containers[0].securityContext.capabilities ??= {};
    q.spec.initContainers[0].securityContext.capabilities ??= {};
  });
}

function ensureAnnotations(p: Pod): Pod {
  return tweak(p, (q) => (q.metadata.annotations ??= {}));
}

const dropsAll = (p: Pod) => (p.spec.containers[0].securityContext?.capabilities?.drop ?? []).includes('ALL');

/** Dropping every capability one by one is not dropping ALL. */
const EVERY_CAPABILITY = [
  'SYS_TIME',
  'SYS_MODULE',
  'SYS_RAWIO',
  'SYS_PACCT',
  'SYS_ADMIN',
  'SYS_NICE',
  'SYS_RESOURCE',
  'SYS_TIME',
  'SYS_TTY_CONFIG',
  'MKNOD',
  'AUDIT_WRITE',
  'AUDIT_CONTROL',
  'MAC_OVERRIDE',
  'MAC_ADMIN',
  'NET_ADMIN',
  'SYSLOG',
  'CHOWN',
  'NET_RAW',
  'DAC_OVERRIDE',
  'FOWNER',
  'DAC_READ_SEARCH',
  'FSETID',
  'KILL',
  'SETGID',
  'SETUID',
  'LINUX_IMMUTABLE',
  'NET_BIND_SERVICE',
  'NET_BROADCAST',
  'IPC_LOCK',
  'IPC_OWNER',
  'SYS_CHROOT',
  'SYS_PTRACE',
  'SYS_BOOT',
  'LEASE',
  'SETFCAP',
  'WAKE_ALARM',
  'BLOCK_SUSPEND',
];
const BASELINE_CAPABILITIES = [
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
];

function ensureSELinuxOptions(p: Pod): Pod {
  return tweak(ensureSecurityContext(p), (q) => {
    q.spec.securityContext.seLinuxOptions ??= {};
    q.spec.containers[0].securityContext.seLinuxOptions ??= {};
    q.spec.initContainers[0].securityContext.seLinuxOptions ??= {};
  });
}

export interface FixtureGenerator {
  /** Substring of the message a failing pod gets; the check ID when absent. */
  readonly expectErrorSubstring?: string;
  readonly pass: (p: Pod) => Pod[];
  readonly fail: (p: Pod) => Pod[];
}

/** check → level → minimum version → generator (baseline generators also serve restricted). */
export const FIXTURES: Record<
  string,
  { level: 'baseline' | 'restricted'; versions: Record<number, FixtureGenerator> }
> = {
  allowPrivilegeEscalation: {
    level: 'restricted',
    versions: {
      8: {
        expectErrorSubstring: 'allowPrivilegeEscalation != false',
        // The minimal valid pod already captures all valid combinations.
        pass: () => [],
        fail: (p) => [
          tweak(p, (q) => (q.spec.containers[0].securityContext.allowPrivilegeEscalation = true)),
          tweak(p, (q) => (q.spec.initContainers[0].securityContext.allowPrivilegeEscalation = true)),
          tweak(p, (q) => (q.spec.containers[0].securityContext.allowPrivilegeEscalation = null)),
          tweak(p, (q) => (q.spec.containers[0].securityContext = null)),
        ],
      },
      // ours: from 1.25 a Windows pod need not set it (upstream's generator skips Windows pods).
      25: {
        expectErrorSubstring: 'allowPrivilegeEscalation != false',
        pass: (p) => [
          tweak(p, (q) => {
            q.spec.os = { name: 'windows' };
            q.spec.containers[0].securityContext.allowPrivilegeEscalation = null;
            q.spec.initContainers[0].securityContext.allowPrivilegeEscalation = null;
          }),
        ],
        fail: (p) => [
          tweak(p, (q) => (q.spec.containers[0].securityContext.allowPrivilegeEscalation = true)),
          tweak(p, (q) => (q.spec.initContainers[0].securityContext.allowPrivilegeEscalation = true)),
          tweak(p, (q) => (q.spec.containers[0].securityContext.allowPrivilegeEscalation = null)),
          tweak(p, (q) => (q.spec.containers[0].securityContext = null)),
          tweak(p, (q) => {
            q.spec.os = { name: 'linux' };
            q.spec.containers[0].securityContext.allowPrivilegeEscalation = true;
          }),
        ],
      },
    },
  },
  appArmorProfile: {
    level: 'baseline',
    versions: {
      0: {
        expectErrorSubstring: 'forbidden AppArmor profile',
        pass: (p) => [
          tweak(ensureAnnotations(p), (q) => {
            q.metadata.annotations['container.apparmor.security.beta.kubernetes.io/container1'] = 'runtime/default';
            q.metadata.annotations['container.apparmor.security.beta.kubernetes.io/container1'] = 'localhost/foo';
          }),
          // ours: the fields that replaced the annotations in 1.30
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.securityContext.appArmorProfile = { type: 'RuntimeDefault' };
            q.spec.containers[0].securityContext.appArmorProfile = { type: 'Localhost', localhostProfile: 'foo' };
          }),
        ],
        fail: (p) => [
          tweak(
            ensureAnnotations(p),
            (q) => (q.metadata.annotations['container.apparmor.security.beta.kubernetes.io/container1'] = 'unconfined'),
          ),
          tweak(
            ensureAnnotations(p),
            (q) =>
              (q.metadata.annotations['container.apparmor.security.beta.kubernetes.io/initcontainer1'] = 'unconfined'),
          ),
          // ours: the fields
          tweak(ensureSecurityContext(p), (q) => (q.spec.securityContext.appArmorProfile = { type: 'Unconfined' })),
          tweak(
            ensureSecurityContext(p),
            (q) => (q.spec.containers[0].securityContext.appArmorProfile = { type: 'Unconfined' }),
          ),
          tweak(
            ensureSecurityContext(p),
            (q) => (q.spec.initContainers[0].securityContext.appArmorProfile = { type: 'Unconfined' }),
          ),
        ],
      },
    },
  },
  capabilities_baseline: {
    level: 'baseline',
    versions: {
      0: {
        expectErrorSubstring: 'capabilities',
        // Nothing to add on a minimal pod that drops ALL.
        pass: (p) =>
          dropsAll(p)
            ? []
            : [
                tweak(ensureCapabilities(p), (q) => {
                  q.spec.containers[0].securityContext.capabilities.add = [...BASELINE_CAPABILITIES];
                  q.spec.initContainers[0].securityContext.capabilities.add = [...BASELINE_CAPABILITIES];
                }),
              ],
        fail: (p) => [
          tweak(ensureCapabilities(p), (q) => (q.spec.containers[0].securityContext.capabilities.add = ['NET_RAW'])),
          tweak(
            ensureCapabilities(p),
            (q) => (q.spec.initContainers[0].securityContext.capabilities.add = ['NET_RAW']),
          ),
          // case difference
          tweak(ensureCapabilities(p), (q) => (q.spec.containers[0].securityContext.capabilities.add = ['chown'])),
          // CAP_ prefix
          tweak(ensureCapabilities(p), (q) => (q.spec.containers[0].securityContext.capabilities.add = ['CAP_CHOWN'])),
        ],
      },
    },
  },
  capabilities_restricted: {
    level: 'restricted',
    versions: {
      22: {
        expectErrorSubstring: 'unrestricted capabilities',
        pass: (p) => [
          tweak(ensureCapabilities(p), (q) => {
            q.spec.containers[0].securityContext.capabilities.drop = ['ALL'];
            q.spec.initContainers[0].securityContext.capabilities.drop = ['ALL'];
            q.spec.containers[0].securityContext.capabilities.add = ['NET_BIND_SERVICE'];
            q.spec.initContainers[0].securityContext.capabilities.add = ['NET_BIND_SERVICE'];
          }),
        ],
        fail: (p) => [
          tweak(ensureCapabilities(p), (q) => (q.spec.containers[0].securityContext.capabilities.drop = [])),
          tweak(ensureCapabilities(p), (q) => (q.spec.initContainers[0].securityContext.capabilities.drop = [])),
          tweak(ensureCapabilities(p), (q) => {
            q.spec.containers[0].securityContext.capabilities.drop = [...EVERY_CAPABILITY];
            q.spec.initContainers[0].securityContext.capabilities.drop = [...EVERY_CAPABILITY];
          }),
          tweak(ensureCapabilities(p), (q) => {
            q.spec.containers[0].securityContext.capabilities = { drop: ['ALL'], add: [...BASELINE_CAPABILITIES] };
            q.spec.initContainers[0].securityContext.capabilities = { drop: ['ALL'], add: [...BASELINE_CAPABILITIES] };
          }),
        ],
      },
      // ours: from 1.25 a Windows pod need not drop capabilities.
      25: {
        expectErrorSubstring: 'unrestricted capabilities',
        pass: (p) => [
          tweak(p, (q) => {
            q.spec.os = { name: 'windows' };
            q.spec.containers[0].securityContext.capabilities = null;
            q.spec.initContainers[0].securityContext.capabilities = null;
          }),
        ],
        fail: (p) => [
          tweak(ensureCapabilities(p), (q) => (q.spec.containers[0].securityContext.capabilities.drop = [])),
          tweak(ensureCapabilities(p), (q) => (q.spec.initContainers[0].securityContext.capabilities.drop = [])),
          tweak(
            ensureCapabilities(p),
            (q) => (q.spec.containers[0].securityContext.capabilities = { drop: ['ALL'], add: ['CHOWN'] }),
          ),
        ],
      },
    },
  },
  hostNamespaces: {
    level: 'baseline',
    versions: {
      0: {
        expectErrorSubstring: 'host namespaces',
        pass: () => [],
        fail: (p) => [
          tweak(p, (q) => (q.spec.hostIPC = true)),
          tweak(p, (q) => (q.spec.hostNetwork = true)),
          tweak(p, (q) => (q.spec.hostPID = true)),
        ],
      },
    },
  },
  hostPathVolumes: {
    level: 'baseline',
    versions: {
      0: {
        expectErrorSubstring: 'hostPath volumes',
        pass: () => [],
        fail: (p) => [
          tweak(
            p,
            (q) =>
              (q.spec.volumes = [
                { name: 'volume-emptydir', emptyDir: {} },
                { name: 'volume-hostpath', hostPath: { path: '/a' } },
              ]),
          ),
          tweak(
            p,
            (q) =>
              (q.spec.volumes = [
                { name: 'volume-hostpath-a', hostPath: { path: '/a' } },
                { name: 'volume-hostpath-b', hostPath: { path: '/b' } },
              ]),
          ),
        ],
      },
    },
  },
  hostPorts: {
    level: 'baseline',
    versions: {
      0: {
        expectErrorSubstring: 'hostPort',
        pass: (p) => [
          tweak(p, (q) => {
            q.spec.containers[0].ports = [{ containerPort: 12345 }];
            q.spec.initContainers[0].ports = [{ containerPort: 12346 }];
          }),
        ],
        fail: (p) => [
          tweak(p, (q) => (q.spec.containers[0].ports = [{ containerPort: 12345, hostPort: 12345 }])),
          tweak(p, (q) => (q.spec.initContainers[0].ports = [{ containerPort: 12346, hostPort: 12346 }])),
          tweak(p, (q) => {
            q.spec.containers[0].ports = [{ containerPort: 12345, hostPort: 12345 }, { containerPort: 12347 }];
            q.spec.initContainers[0].ports = [{ containerPort: 12346, hostPort: 12346 }, { containerPort: 12348 }];
          }),
        ],
      },
    },
  },
  hostProbesAndHostLifecycle: {
    level: 'baseline',
    versions: {
      34: {
        expectErrorSubstring: 'probe or lifecycle host',
        pass: (p) => [
          tweak(p, (q) => {
            q.spec.containers[0].livenessProbe = { httpGet: { port: 8080 } };
            q.spec.containers[0].readinessProbe = { tcpSocket: { port: 8080, host: '' } };
            q.spec.containers[0].lifecycle = {
              postStart: { httpGet: { port: 8080 } },
              preStop: { exec: { command: ['true'] } },
            };
          }),
        ],
        fail: (p) => [
          // Upstream's five, localhost included: the check forbids every host.
          tweak(p, (q) => (q.spec.containers[0].livenessProbe = { httpGet: { host: 'bad.host', port: 8080 } })),
          tweak(p, (q) => {
            q.spec.initContainers[0].restartPolicy = 'Always';
            q.spec.initContainers[0].readinessProbe = { tcpSocket: { host: '8.8.8.8', port: 8080 } };
          }),
          tweak(
            p,
            (q) => (q.spec.containers[0].lifecycle = { postStart: { httpGet: { host: 'bad.host', port: 8080 } } }),
          ),
          tweak(p, (q) => (q.spec.containers[0].livenessProbe = { httpGet: { host: '127.0.0.1', port: 8080 } })),
          tweak(p, (q) => (q.spec.containers[0].readinessProbe = { tcpSocket: { host: '::1', port: 8080 } })),
          // ours: the other probes and handlers
          tweak(p, (q) => (q.spec.containers[0].readinessProbe = { tcpSocket: { port: 8080, host: 'bad.host' } })),
          tweak(p, (q) => (q.spec.containers[0].startupProbe = { httpGet: { port: 8080, host: '10.0.0.1' } })),
          tweak(
            p,
            (q) => (q.spec.containers[0].lifecycle = { postStart: { httpGet: { port: 8080, host: 'bad.host' } } }),
          ),
          tweak(
            p,
            (q) => (q.spec.containers[0].lifecycle = { preStop: { tcpSocket: { port: 8080, host: 'bad.host' } } }),
          ),
          tweak(p, (q) => (q.spec.initContainers[0].livenessProbe = { httpGet: { port: 8080, host: 'bad.host' } })),
        ],
      },
    },
  },
  privileged: {
    level: 'baseline',
    versions: {
      0: {
        expectErrorSubstring: 'privileged',
        pass: (p) => [
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.containers[0].securityContext.privileged = false;
            q.spec.initContainers[0].securityContext.privileged = false;
          }),
        ],
        fail: (p) => [
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.containers[0].securityContext.privileged = true;
            q.spec.containers[0].securityContext.allowPrivilegeEscalation = null;
          }),
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.initContainers[0].securityContext.privileged = true;
            q.spec.initContainers[0].securityContext.allowPrivilegeEscalation = null;
          }),
        ],
      },
    },
  },
  procMount: {
    level: 'baseline',
    versions: {
      0: {
        expectErrorSubstring: 'procMount',
        pass: (p) => [
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.containers[0].securityContext.procMount = 'Default';
            q.spec.initContainers[0].securityContext.procMount = 'Default';
            q.spec.hostUsers = false;
          }),
        ],
        fail: (p) => [
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.containers[0].securityContext.procMount = 'Unmasked';
            q.spec.hostUsers = false;
          }),
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.initContainers[0].securityContext.procMount = 'Unmasked';
            q.spec.hostUsers = false;
          }),
        ],
      },
      35: {
        expectErrorSubstring: 'procMount',
        pass: (p) => [
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.containers[0].securityContext.procMount = 'Default';
            q.spec.initContainers[0].securityContext.procMount = 'Default';
            q.spec.hostUsers = false;
          }),
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.containers[0].securityContext.procMount = 'Unmasked';
            q.spec.initContainers[0].securityContext.procMount = 'Unmasked';
            q.spec.hostUsers = false;
          }),
        ],
        fail: (p) => [
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.containers[0].securityContext.procMount = 'Unmasked';
            q.spec.hostUsers = true;
          }),
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.initContainers[0].securityContext.procMount = 'Unmasked';
            q.spec.hostUsers = true;
          }),
        ],
      },
    },
  },
  procMount_restricted: {
    level: 'restricted',
    versions: {
      35: {
        expectErrorSubstring: 'procMount',
        pass: (p) => [
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.containers[0].securityContext.procMount = 'Default';
            q.spec.initContainers[0].securityContext.procMount = 'Default';
            q.spec.hostUsers = false;
          }),
        ],
        fail: (p) => [
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.containers[0].securityContext.procMount = 'Unmasked';
            q.spec.hostUsers = false;
          }),
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.initContainers[0].securityContext.procMount = 'Unmasked';
            q.spec.hostUsers = false;
          }),
        ],
      },
    },
  },
  restrictedVolumes: {
    level: 'restricted',
    versions: {
      0: {
        expectErrorSubstring: 'restricted volume types',
        pass: (p) => [
          tweak(p, (q) => {
            q.spec.volumes = [
              { name: 'volume0', emptyDir: {} }, // implicit empty dir, after defaulting
              { name: 'volume1', emptyDir: {} },
              { name: 'volume2', secret: { secretName: 'test' } },
              { name: 'volume3', persistentVolumeClaim: { claimName: 'test' } },
              {
                name: 'volume4',
                downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] },
              },
              { name: 'volume5', configMap: { name: 'test' } },
              { name: 'volume6', projected: { sources: [] } },
            ];
          }),
        ],
        fail: (p) =>
          [
            { gcePersistentDisk: { pdName: 'test' } },
            { awsElasticBlockStore: { volumeID: 'test' } },
            { gitRepo: { repository: 'github.com/kubernetes/kubernetes' } },
            { nfs: { server: 'test', path: '/test' } },
            { iscsi: { targetPortal: 'test', iqn: 'iqn.2001-04.com.example:storage.kube.sys1.xyz', lun: 0 } },
            { glusterfs: { path: 'test', endpoints: 'test' } },
            { rbd: { monitors: ['test'], image: 'test' } },
            { flexVolume: { driver: 'test' } },
            { cinder: { volumeID: 'test' } },
            { cephfs: { monitors: ['test'] } },
            { flocker: { datasetName: 'test' } },
            { fc: { wwids: ['test'] } },
            { azureFile: { secretName: 'test', shareName: 'test' } },
            { vsphereVolume: { volumePath: 'test' } },
            { quobyte: { registry: 'localhost:1234', volume: 'test' } },
            { azureDisk: { diskName: 'test', diskURI: 'https://test.blob.core.windows.net/test/test.vhd' } },
            { portworxVolume: { volumeID: 'test', fsType: 'ext4' } },
            { scaleIO: { volumeName: 'test', gateway: 'localhost', system: 'test' } },
            { storageos: { volumeName: 'test' } },
            { hostPath: { path: '/dev/null' } },
          ].map((source) => tweak(p, (q) => (q.spec.volumes = [{ name: 'volume1', ...source }]))),
      },
    },
  },
  runAsNonRoot: {
    level: 'restricted',
    versions: {
      0: {
        expectErrorSubstring: 'runAsNonRoot != true',
        pass: (p) => {
          p = ensureSecurityContext(p);
          return [
            tweak(p, (q) => {
              q.spec.securityContext.runAsNonRoot = true;
              q.spec.containers[0].securityContext.runAsNonRoot = null;
              q.spec.initContainers[0].securityContext.runAsNonRoot = null;
            }),
            tweak(p, (q) => {
              q.spec.securityContext.runAsNonRoot = null;
              q.spec.containers[0].securityContext.runAsNonRoot = true;
              q.spec.initContainers[0].securityContext.runAsNonRoot = true;
            }),
          ];
        },
        fail: (p) => {
          p = ensureSecurityContext(p);
          return [
            tweak(p, (q) => {
              q.spec.securityContext.runAsNonRoot = null;
              q.spec.containers[0].securityContext.runAsNonRoot = null;
              q.spec.initContainers[0].securityContext.runAsNonRoot = null;
            }),
            tweak(p, (q) => (q.spec.securityContext.runAsNonRoot = false)),
            tweak(p, (q) => (q.spec.containers[0].securityContext.runAsNonRoot = false)),
            tweak(p, (q) => (q.spec.initContainers[0].securityContext.runAsNonRoot = false)),
          ];
        },
      },
    },
  },
  runAsUser: {
    level: 'restricted',
    versions: {
      23: {
        expectErrorSubstring: 'runAsUser=0',
        pass: (p) => [
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.securityContext.runAsUser = 1000;
            q.spec.containers[0].securityContext.runAsUser = 1000;
            q.spec.initContainers[0].securityContext.runAsUser = 1000;
          }),
        ],
        fail: (p) => [
          tweak(ensureSecurityContext(p), (q) => (q.spec.securityContext.runAsUser = 0)),
          tweak(ensureSecurityContext(p), (q) => (q.spec.containers[0].securityContext.runAsUser = 0)),
          tweak(ensureSecurityContext(p), (q) => (q.spec.initContainers[0].securityContext.runAsUser = 0)),
        ],
      },
    },
  },
  seLinuxOptions: {
    level: 'baseline',
    versions: {
      0: {
        expectErrorSubstring: 'seLinuxOptions',
        pass: (p) => {
          p = ensureSELinuxOptions(p);
          return [
            tweak(p, (q) => {
              q.spec.securityContext.seLinuxOptions = null;
              q.spec.containers[0].securityContext.seLinuxOptions = null;
              q.spec.initContainers[0].securityContext.seLinuxOptions = {};
            }),
            tweak(p, (q) => {
              q.spec.securityContext.seLinuxOptions.type = 'container_t';
              q.spec.containers[0].securityContext.seLinuxOptions.type = 'container_init_t';
              q.spec.initContainers[0].securityContext.seLinuxOptions.type = 'container_kvm_t';
              q.spec.securityContext.seLinuxOptions.level = '';
              q.spec.containers[0].securityContext.seLinuxOptions.level = 'somevalue';
            }),
          ];
        },
        fail: (p) => {
          p = ensureSELinuxOptions(p);
          return [
            tweak(p, (q) => (q.spec.securityContext.seLinuxOptions.type = 'somevalue')),
            tweak(p, (q) => (q.spec.containers[0].securityContext.seLinuxOptions.type = 'somevalue')),
            tweak(p, (q) => (q.spec.initContainers[0].securityContext.seLinuxOptions.type = 'somevalue')),
            tweak(p, (q) => (q.spec.securityContext.seLinuxOptions.user = 'somevalue')),
            tweak(p, (q) => (q.spec.securityContext.seLinuxOptions.role = 'somevalue')),
          ];
        },
      },
      31: {
        expectErrorSubstring: 'seLinuxOptions',
        pass: (p) => {
          p = ensureSELinuxOptions(p);
          return [
            tweak(p, (q) => {
              q.spec.securityContext.seLinuxOptions.type = 'container_t';
              q.spec.containers[0].securityContext.seLinuxOptions.type = 'container_engine_t';
              q.spec.initContainers[0].securityContext.seLinuxOptions.type = 'container_kvm_t';
            }),
          ];
        },
        fail: (p) => {
          p = ensureSELinuxOptions(p);
          return [
            tweak(p, (q) => (q.spec.securityContext.seLinuxOptions.type = 'somevalue')),
            tweak(p, (q) => (q.spec.containers[0].securityContext.seLinuxOptions.user = 'somevalue')),
            tweak(p, (q) => (q.spec.initContainers[0].securityContext.seLinuxOptions.role = 'somevalue')),
          ];
        },
      },
    },
  },
  seccompProfile_baseline: {
    level: 'baseline',
    versions: {
      0: {
        expectErrorSubstring: 'seccompProfile',
        pass: (p) => [
          tweak(ensureAnnotations(p), (q) => {
            q.metadata.annotations['seccomp.security.alpha.kubernetes.io/pod'] = 'runtime/default';
            q.metadata.annotations['container.seccomp.security.alpha.kubernetes.io/container1'] = 'localhost/testing';
          }),
        ],
        fail: (p) => [
          tweak(
            ensureAnnotations(p),
            (q) => (q.metadata.annotations['seccomp.security.alpha.kubernetes.io/pod'] = 'unconfined'),
          ),
          tweak(
            ensureAnnotations(p),
            (q) => (q.metadata.annotations['container.seccomp.security.alpha.kubernetes.io/container1'] = 'unconfined'),
          ),
          tweak(
            ensureAnnotations(p),
            (q) =>
              (q.metadata.annotations['container.seccomp.security.alpha.kubernetes.io/initcontainer1'] = 'unconfined'),
          ),
        ],
      },
      19: {
        expectErrorSubstring: 'seccompProfile',
        pass: (p) =>
          p.spec.securityContext?.seccompProfile?.type === 'RuntimeDefault'
            ? []
            : [
                tweak(ensureSecurityContext(p), (q) => {
                  q.spec.securityContext.seccompProfile = { type: 'RuntimeDefault' };
                  q.spec.containers[0].securityContext.seccompProfile = { type: 'RuntimeDefault' };
                }),
              ],
        fail: (p) => [
          tweak(ensureSecurityContext(p), (q) => (q.spec.securityContext.seccompProfile = { type: 'Unconfined' })),
          tweak(
            ensureSecurityContext(p),
            (q) => (q.spec.containers[0].securityContext.seccompProfile = { type: 'Unconfined' }),
          ),
          tweak(
            ensureSecurityContext(p),
            (q) => (q.spec.initContainers[0].securityContext.seccompProfile = { type: 'Unconfined' }),
          ),
        ],
      },
    },
  },
  seccompProfile_restricted: {
    level: 'restricted',
    versions: {
      19: {
        expectErrorSubstring: 'seccompProfile',
        pass: (p) => [
          tweak(ensureSecurityContext(p), (q) => (q.spec.securityContext.seccompProfile = { type: 'RuntimeDefault' })),
          tweak(
            ensureSecurityContext(p),
            (q) => (q.spec.securityContext.seccompProfile = { type: 'Localhost', localhostProfile: 'testing' }),
          ),
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.securityContext.seccompProfile = null;
            q.spec.containers[0].securityContext.seccompProfile = { type: 'RuntimeDefault' };
            q.spec.initContainers[0].securityContext.seccompProfile = {
              type: 'Localhost',
              localhostProfile: 'testing',
            };
          }),
        ],
        fail: (p) => [
          tweak(ensureSecurityContext(p), (q) => (q.spec.securityContext.seccompProfile = null)),
          tweak(ensureSecurityContext(p), (q) => (q.spec.securityContext.seccompProfile = { type: 'Unconfined' })),
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.securityContext.seccompProfile = null;
            q.spec.containers[0].securityContext.seccompProfile = { type: 'RuntimeDefault' };
          }),
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.securityContext.seccompProfile = null;
            q.spec.initContainers[0].securityContext.seccompProfile = { type: 'RuntimeDefault' };
          }),
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.securityContext.seccompProfile = null;
            q.spec.containers[0].securityContext.seccompProfile = { type: 'RuntimeDefault' };
            q.spec.initContainers[0].securityContext.seccompProfile = { type: 'Unconfined' };
          }),
        ],
      },
      // ours: from 1.25 a Windows pod need not set a seccomp profile.
      25: {
        expectErrorSubstring: 'seccompProfile',
        pass: (p) => [
          tweak(ensureSecurityContext(p), (q) => {
            q.spec.os = { name: 'windows' };
            q.spec.securityContext.seccompProfile = null;
          }),
        ],
        fail: (p) => [
          tweak(ensureSecurityContext(p), (q) => (q.spec.securityContext.seccompProfile = null)),
          tweak(ensureSecurityContext(p), (q) => (q.spec.securityContext.seccompProfile = { type: 'Unconfined' })),
          tweak(
            ensureSecurityContext(p),
            (q) => (q.spec.containers[0].securityContext.seccompProfile = { type: 'Unconfined' }),
          ),
        ],
      },
    },
  },
  sysctls: {
    level: 'baseline',
    versions: Object.fromEntries(
      (
        [
          [
            0,
            [
              'kernel.shm_rmid_forced',
              'net.ipv4.ip_local_port_range',
              'net.ipv4.tcp_syncookies',
              'net.ipv4.ping_group_range',
              'net.ipv4.ip_unprivileged_port_start',
            ],
          ],
          [27, ['net.ipv4.ip_local_reserved_ports']],
          [
            29,
            [
              'net.ipv4.tcp_keepalive_time',
              'net.ipv4.tcp_fin_timeout',
              'net.ipv4.tcp_keepalive_intvl',
              'net.ipv4.tcp_keepalive_probes',
            ],
          ],
          [32, ['net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem']],
        ] as [number, string[]][]
      ).map(([version], i, all) => {
        const safe = all.slice(0, i + 1).flatMap(([, names]) => names);
        const generator: FixtureGenerator = {
          expectErrorSubstring: 'forbidden sysctl',
          pass: (p) => [
            tweak(ensureSecurityContext(p), (q) => (q.spec.securityContext.sysctls = null)),
            tweak(
              ensureSecurityContext(p),
              (q) => (q.spec.securityContext.sysctls = safe.map((name) => ({ name, value: '0' }))),
            ),
          ],
          fail: (p) => [
            tweak(
              ensureSecurityContext(p),
              (q) => (q.spec.securityContext.sysctls = [{ name: 'othersysctl', value: 'other' }]),
            ),
            // ours: a sysctl that is safe only from a later version fails before it.
            ...all
              .slice(i + 1, i + 2)
              .map(([, names]) =>
                tweak(
                  ensureSecurityContext(p),
                  (q) => (q.spec.securityContext.sysctls = [{ name: names[0], value: '0' }]),
                ),
              ),
          ],
        };
        return [version, generator];
      }),
    ),
  },
  windowsHostProcess: {
    level: 'baseline',
    versions: {
      0: {
        expectErrorSubstring: 'hostProcess',
        pass: () => [],
        fail: (p) => {
          const q0 = tweak(ensureSecurityContext(p), (q) => {
            q.spec.securityContext.windowsOptions ??= {};
            q.spec.containers[0].securityContext.windowsOptions ??= {};
            q.spec.initContainers[0].securityContext.windowsOptions ??= {};
          });
          return [
            // HostNetwork is required for HostProcess pods, so upstream sets it too.
            tweak(q0, (q) => {
              q.spec.hostNetwork = true;
              q.spec.securityContext.windowsOptions.hostProcess = true;
            }),
            tweak(q0, (q) => {
              q.spec.hostNetwork = true;
              q.spec.containers[0].securityContext.windowsOptions.hostProcess = true;
              q.spec.initContainers[0].securityContext.windowsOptions.hostProcess = true;
            }),
          ];
        },
      },
    },
  },
};
