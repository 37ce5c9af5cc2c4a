// PodSecurity cases both proofs run (the project's VAP engine and the real kube-apiserver): every
// pass and fail pod of upstream's fixtures (test/plugins/pod-security/fixtures.ts) for every check,
// level and policy version, in a namespace that enforces them and in one that only warns and audits
// them, the same pod template in a Deployment; and the configuration's defaults and exemptions.
import { CHECKS } from '../../../functions/pod-security/policy/registry.js';
import type { KubeObject } from '../../../lib/admission/types.js';
import type { Pod } from '../../plugins/pod-security/fixtures.js';
import { FIXTURES, minimalValidPod } from '../../plugins/pod-security/fixtures.js';

/** The configuration of the proof: defaults enforce baseline, warn and audit restricted; one of each exemption. */
export const POD_SECURITY_CONFIGURATION = {
  apiVersion: 'pod-security.admission.config.k8s.io/v1',
  kind: 'PodSecurityConfiguration',
  defaults: { enforce: 'baseline', warn: 'restricted', audit: 'restricted' },
  exemptions: { usernames: ['exempt-user'], runtimeClasses: ['exempt-runtime'], namespaces: ['exempt-ns'] },
} as const;

export const NEWEST_MINOR = 35;

export interface PodSecurityCase {
  readonly name: string;
  /** The namespace's pod-security labels. */
  readonly labels: Readonly<Record<string, string>>;
  /** Where it is sent: a Pod, or a workload (its kind and resource). */
  readonly object: KubeObject;
  readonly resource: { readonly group: string; readonly resource: string };
  readonly username?: string;
  /** The namespace's name when it matters (an exempt one); else one per label set. */
  readonly namespace?: string;
}

/** The object as the apiserver holds it: a null field is no field (upstream's fixtures set some to nil). */
export function withoutNulls<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutNulls) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== null)
        .map(([k, v]) => [k, withoutNulls(v)]),
    ) as T;
  return value;
}

const asPod = (pod: Pod, name: string): KubeObject =>
  withoutNulls({ apiVersion: 'v1', kind: 'Pod', ...pod, metadata: { ...pod.metadata, name } }) as KubeObject;

export const POD = { group: '', resource: 'pods' };
export const DEPLOYMENT = { group: 'apps', resource: 'deployments' };

export const asDeployment = (pod: Pod, name: string): KubeObject =>
  withoutNulls({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { ...pod, metadata: { ...pod.metadata, labels: { app: name } } },
    },
  }) as KubeObject;

/** run.go's checksForLevelAndVersion: the checks in effect, overridden ones left out. */
function checksInEffect(level: 'baseline' | 'restricted', minor: number): string[] {
  const inEffect = CHECKS.filter(
    (c) => (c.level === level || level === 'restricted') && c.versions[0].minimumVersion.minor <= minor,
  );
  const overridden = new Set(
    inEffect
      .filter((c) => c.level === 'restricted')
      .flatMap((c) => [...c.versions].reverse().find((v) => v.minimumVersion.minor <= minor)?.overrideCheckIDs ?? []),
  );
  return inEffect.map((c) => c.id).filter((id) => !overridden.has(id));
}

function generatorFor(check: string, minor: number) {
  const versions = Object.keys(FIXTURES[check]?.versions ?? {})
    .map(Number)
    .filter((v) => v <= minor)
    .sort((a, b) => b - a);
  return versions.length ? FIXTURES[check].versions[versions[0]] : undefined;
}

const enforcing = (level: string, version: string) => ({
  'pod-security.kubernetes.io/enforce': level,
  'pod-security.kubernetes.io/enforce-version': version,
  'pod-security.kubernetes.io/audit': level,
  'pod-security.kubernetes.io/audit-version': version,
});
const warning = (level: string, version: string) => ({
  'pod-security.kubernetes.io/enforce': 'privileged',
  'pod-security.kubernetes.io/warn': level,
  'pod-security.kubernetes.io/warn-version': version,
  'pod-security.kubernetes.io/audit': level,
  'pod-security.kubernetes.io/audit-version': version,
});

/**
 * The policy versions where some check starts or changes, and one past the newest: every version
 * between two of them judges as the older one, by the same checks (the webhook's suite runs them all).
 */
export const REVISIONS: readonly number[] = [
  ...new Set([...CHECKS.flatMap((c) => c.versions.map((r) => r.minimumVersion.minor)), NEWEST_MINOR + 1]),
].sort((a, b) => a - b);

/**
 * Every fixture pod of every check, level and version (`minors`, and latest):
 * created in a namespace enforcing (and auditing) that level and version, in one that only warns
 * and audits it, and as a Deployment's template in the enforcing one (warned at the enforce level).
 */
export function fixtureCases(minors: readonly number[] = REVISIONS): PodSecurityCase[] {
  const cases: PodSecurityCase[] = [];
  for (const level of ['baseline', 'restricted'] as const) {
    for (const minor of minors) {
      const versions = minor === NEWEST_MINOR ? [`v1.${minor}`, 'latest'] : [`v1.${minor}`];
      for (const version of versions) {
        const valid = minimalValidPod(level, minor);
        const pods: [string, Pod][] = [['minimal valid', valid]];
        for (const check of checksInEffect(level, Math.min(minor, NEWEST_MINOR))) {
          const generator = generatorFor(check, Math.min(minor, NEWEST_MINOR));
          if (!generator) throw new Error(`no fixture for ${check} at v1.${minor}`);
          for (const [i, p] of generator.pass(structuredClone(valid)).entries()) pods.push([`${check} pass ${i}`, p]);
          for (const [i, p] of generator.fail(structuredClone(valid)).entries()) pods.push([`${check} fail ${i}`, p]);
        }
        for (const [what, pod] of pods) {
          const name = `${level}:${version} ${what}`;
          cases.push({
            name: `${name} (enforce)`,
            labels: enforcing(level, version),
            object: asPod(pod, 'p'),
            resource: POD,
          });
          cases.push({
            name: `${name} (warn)`,
            labels: warning(level, version),
            object: asPod(pod, 'p'),
            resource: POD,
          });
          cases.push({
            name: `${name} (Deployment)`,
            labels: enforcing(level, version),
            object: asDeployment(pod, 'd'),
            resource: DEPLOYMENT,
          });
        }
      }
    }
  }
  return cases;
}

const container = (name: string, securityContext?: Record<string, unknown>) => ({
  name,
  image: 'registry.k8s.io/pause',
  ...(securityContext && { securityContext }),
});
const privilegedPod = (extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p' },
  spec: { containers: [container('c', { privileged: true })], hostNetwork: true, ...extra },
});
const plainPod = (): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p' },
  spec: { containers: [container('c')] },
});

const workloads = (template: KubeObject): PodSecurityCase[] => {
  const { apiVersion: _a, kind: _k, ...pod } = template;
  const tpl = { metadata: { labels: { app: 'w' } }, spec: pod.spec };
  const selector = { matchLabels: { app: 'w' } };
  const of = (group: string, resource: string, apiVersion: string, kind: string, body: Record<string, unknown>) => ({
    name: `${kind} with a privileged template`,
    labels: {},
    object: { apiVersion, kind, metadata: { name: 'w' }, ...body } as KubeObject,
    resource: { group, resource },
  });
  return [
    of('apps', 'deployments', 'apps/v1', 'Deployment', { spec: { selector, template: tpl } }),
    of('apps', 'replicasets', 'apps/v1', 'ReplicaSet', { spec: { selector, template: tpl } }),
    of('apps', 'statefulsets', 'apps/v1', 'StatefulSet', { spec: { selector, serviceName: 'w', template: tpl } }),
    of('apps', 'daemonsets', 'apps/v1', 'DaemonSet', { spec: { selector, template: tpl } }),
    of('batch', 'jobs', 'batch/v1', 'Job', {
      spec: { template: { ...tpl, spec: { ...(tpl.spec as object), restartPolicy: 'Never' } } },
    }),
    of('batch', 'cronjobs', 'batch/v1', 'CronJob', {
      spec: {
        schedule: '* * * * *',
        jobTemplate: { spec: { template: { ...tpl, spec: { ...(tpl.spec as object), restartPolicy: 'Never' } } } },
      },
    }),
    of('', 'replicationcontrollers', 'v1', 'ReplicationController', {
      spec: { selector: { app: 'w' }, template: tpl },
    }),
    of('', 'podtemplates', 'v1', 'PodTemplate', { template: tpl }),
  ];
};

/** The configuration's defaults and exemptions, upstream's label rules, and every workload kind. */
export function configurationCases(): PodSecurityCase[] {
  return [
    {
      name: 'an unlabelled namespace enforces the default (baseline)',
      labels: {},
      object: privilegedPod(),
      resource: POD,
    },
    {
      name: 'an unlabelled namespace warns at the default (restricted)',
      labels: {},
      object: plainPod(),
      resource: POD,
    },
    {
      name: 'an exempt user is not judged',
      labels: {},
      object: privilegedPod(),
      resource: POD,
      username: 'exempt-user',
    },
    {
      name: 'an exempt user is not judged in a namespace labelled enforce=restricted',
      labels: { 'pod-security.kubernetes.io/enforce': 'restricted' },
      object: privilegedPod(),
      resource: POD,
      username: 'exempt-user',
    },
    {
      name: 'an exempt runtime class is not judged',
      labels: {},
      object: privilegedPod({ runtimeClassName: 'exempt-runtime' }),
      resource: POD,
    },
    {
      name: 'another runtime class is judged',
      labels: {},
      object: privilegedPod({ runtimeClassName: 'other-runtime' }),
      resource: POD,
    },
    {
      name: 'an exempt namespace is not judged',
      labels: {},
      object: privilegedPod(),
      resource: POD,
      namespace: 'exempt-ns',
    },
    {
      name: 'a namespace labelled privileged admits everything',
      labels: {
        'pod-security.kubernetes.io/enforce': 'privileged',
        'pod-security.kubernetes.io/warn': 'privileged',
        'pod-security.kubernetes.io/audit': 'privileged',
      },
      object: privilegedPod(),
      resource: POD,
    },
    {
      name: 'a namespace labelled enforce=privileged still warns at the default',
      labels: { 'pod-security.kubernetes.io/enforce': 'privileged' },
      object: privilegedPod(),
      resource: POD,
    },
    {
      name: 'an invalid enforce label enforces restricted',
      labels: { 'pod-security.kubernetes.io/enforce': 'strict' },
      object: plainPod(),
      resource: POD,
    },
    {
      name: 'an invalid warn label warns nothing',
      labels: { 'pod-security.kubernetes.io/warn': 'strict', 'pod-security.kubernetes.io/enforce': 'privileged' },
      object: plainPod(),
      resource: POD,
    },
    {
      name: 'an invalid version is latest',
      labels: {
        'pod-security.kubernetes.io/enforce': 'restricted',
        'pod-security.kubernetes.io/enforce-version': 'v1.022',
      },
      object: plainPod(),
      resource: POD,
    },
    {
      name: 'a workload is warned at the enforce level of a namespace that sets only enforce',
      labels: {
        'pod-security.kubernetes.io/enforce': 'restricted',
        'pod-security.kubernetes.io/enforce-version': 'v1.24',
      },
      object: asDeployment({ metadata: {}, spec: plainPod().spec as object }, 'd'),
      resource: DEPLOYMENT,
    },
    ...workloads(privilegedPod()),
    {
      name: 'an exempt user may create a privileged Deployment unwarned',
      labels: {},
      object: asDeployment({ metadata: {}, spec: privilegedPod().spec as object }, 'd'),
      resource: DEPLOYMENT,
      username: 'exempt-user',
    },
  ];
}
