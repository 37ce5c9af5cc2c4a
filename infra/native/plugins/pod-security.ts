// PodSecurity as three ValidatingAdmissionPolicies, one per mode of upstream's admission
// (staging/src/k8s.io/pod-security-admission/admission/admission.go), each with its own binding:
// `enforce` (Deny) judges pods and their ephemeral containers; `warn` (Warn) and `audit` (Audit)
// judge them and the pod templates of workloads, which are never refused. The namespace's
// `pod-security.kubernetes.io/*` labels come from namespaceObject, the configuration's defaults and
// exemptions are compiled in, and the checks (pod-security-checks.ts) run for the level and policy
// version each mode resolves to, in the order and words of upstream's messages.
import type { Level, Mode, Policy } from '../../../functions/pod-security/api.js';
import { LEVELS, levelLabel, versionLabel, versionString } from '../../../functions/pod-security/api.js';
import type { PodSecurityPluginConfig } from '../../../functions/pod-security/plugin.js';
import { CHECKS, newEvaluator } from '../../../functions/pod-security/policy/registry.js';
import { byBytes } from '../../../functions/pod-security/policy/types.js';
import type { WebhookRule } from '../../../lib/admission/plugin.js';
import type { NamedExpression, NativeCompiler, ValidatingPolicy } from '../policy.js';
import { celString, celStrings } from '../policy.js';
import { CHECK_CEL, POD_VARIABLES, v } from './pod-security-checks.js';

/** The newest policy version any check knows: `latest`, and every newer version, judge as it. */
export const NEWEST_MINOR = newEvaluator().maxMinor;

const rule = (group: string, resources: string[]): WebhookRule => ({
  operations: ['CREATE', 'UPDATE'],
  apiGroups: [group],
  apiVersions: ['v1'],
  resources,
  scope: 'Namespaced',
});
const POD_RULES: readonly WebhookRule[] = [rule('', ['pods', 'pods/ephemeralcontainers'])];
const WORKLOAD_RULES: readonly WebhookRule[] = [
  rule('', ['pods', 'pods/ephemeralcontainers', 'replicationcontrollers', 'podtemplates']),
  rule('apps', ['replicasets', 'deployments', 'statefulsets', 'daemonsets']),
  rule('batch', ['jobs', 'cronjobs']),
];

/** Checks in upstream's order: baseline IDs sorted, then restricted IDs sorted. */
const ORDERED = [
  ...CHECKS.filter((c) => c.level === 'baseline').sort((a, b) => byBytes(a.id, b.id)),
  ...CHECKS.filter((c) => c.level === 'restricted').sort((a, b) => byBytes(a.id, b.id)),
];

/** When a check is in effect, as CEL over the mode's level and minor version (registry.go's populate). */
function inEffect(check: (typeof CHECKS)[number], level: string, minor: string): string {
  const since = check.versions[0].minimumVersion.minor;
  const from = since === 0 ? '' : ` && ${minor} >= ${since}`;
  if (check.level === 'restricted') return `${level} == 'restricted'${from}`;
  const overriddenFrom = CHECKS.flatMap((r) =>
    r.versions.filter((rev) => rev.overrideCheckIDs?.includes(check.id)).map((rev) => rev.minimumVersion.minor),
  );
  if (overriddenFrom.length === 0) return `${level} != 'privileged'${from}`;
  const until = Math.min(...overriddenFrom);
  return `(${level} == 'baseline' || (${level} == 'restricted' && ${minor} < ${until}))${from}`;
}

const LABELS = 'variables.labels';
const VERSION_PATTERN = String.raw`^v1\.(0|[1-9][0-9]{0,14})$`;
const rank = (level: string) => `${celStrings(LEVELS)}.indexOf(${level})`;

/** A mode's level and version from its labels, else the default; an invalid label as upstream reads it. */
function labelled(mode: Mode, defaults: Policy, prefix: string): NamedExpression[] {
  const key = celString(levelLabel(mode));
  const versionKey = celString(versionLabel(mode));
  // An invalid level enforces restricted and warns and audits nothing (they fail open); an invalid version is latest.
  const invalidLevel: Level = mode === 'enforce' ? 'restricted' : 'privileged';
  return [
    {
      name: `${prefix}Level`,
      expression: `!(${key} in ${LABELS}) ? ${celString(defaults[mode].level)} : ${LABELS}[${key}] in ${celStrings(LEVELS)} ? ${LABELS}[${key}] : ${celString(invalidLevel)}`,
    },
    {
      name: `${prefix}Version`,
      expression: `!(${versionKey} in ${LABELS}) ? ${celString(versionString(defaults[mode].version))} : ${LABELS}[${versionKey}] == 'latest' || ${LABELS}[${versionKey}].matches(${celString(VERSION_PATTERN)}) ? ${LABELS}[${versionKey}] : 'latest'`,
    },
  ];
}

/** The level and version of every mode (policyToEvaluate), and the minor version each judges at. */
function levels(defaults: Policy): NamedExpression[] {
  const warnFollowsEnforce = `${v('enforceLabelValid')} && !(${celString(levelLabel('warn'))} in ${LABELS}) && ${rank(v('enforceLevel'))} > ${rank(v('warnOwnLevel'))}`;
  const minor = (mode: Mode) => {
    const version = v(`${mode}Version`);
    const number = `int(${version}.substring(3))`;
    return {
      name: `${mode}Minor`,
      expression: `${version} == 'latest' || ${number} > ${NEWEST_MINOR} ? ${NEWEST_MINOR} : ${number}`,
    };
  };
  return [
    { name: 'labels', expression: 'namespaceObject == null ? {} : namespaceObject.metadata.?labels.orValue({})' },
    ...labelled('enforce', defaults, 'enforce'),
    ...labelled('audit', defaults, 'audit'),
    ...labelled('warn', defaults, 'warnOwn'),
    {
      name: 'enforceLabelValid',
      expression: `${celString(levelLabel('enforce'))} in ${LABELS} && ${LABELS}[${celString(levelLabel('enforce'))}] in ${celStrings(LEVELS)}`,
    },
    // Since 1.26 a namespace that sets only enforce warns at it where it is stricter than warn.
    { name: 'warnFollowsEnforce', expression: warnFollowsEnforce },
    {
      name: 'warnLevel',
      expression: `${v('warnFollowsEnforce')} ? ${v('enforceLevel')} : ${v('warnOwnLevel')}`,
    },
    {
      name: 'warnVersion',
      expression: `${v('warnFollowsEnforce')} && !(${celString(versionLabel('warn'))} in ${LABELS}) ? ${v('enforceVersion')} : ${v('warnOwnVersion')}`,
    },
    minor('enforce'),
    minor('audit'),
    minor('warn'),
  ];
}

/** Every check's variables, each once, in an order where a variable follows those it reads. */
function checkVariables(): NamedExpression[] {
  const seen = new Set<string>();
  return Object.values(CHECK_CEL)
    .flatMap((c) => c.variables)
    .filter((variable) => !seen.has(variable.name) && seen.add(variable.name));
}

/** The failed checks of a mode, as upstream's `reason (detail)` strings, in upstream's order. */
const results = (mode: Mode): NamedExpression => {
  const level = v(`${mode}Level`);
  const minor = v(`${mode}Minor`);
  return {
    name: `${mode}Results`,
    expression: `${level} == 'privileged' ? [] : [${ORDERED.map((check) => `(${inEffect(check, level, minor)}) ? (${CHECK_CEL[check.id].result(minor)}) : ''`).join(', ')}].filter(s, s != '')`,
  };
};

const lv = (mode: Mode) => `${v(`${mode}Level`)} + ':' + ${v(`${mode}Version`)}`;
const SEPARATOR = "', '";

const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
/** isSignificantPodUpdate: an update that changes nothing the standards read is not judged again. */
const SIGNIFICANT_UPDATE = (() => {
  const now = 'dyn(object)';
  const old = 'dyn(oldObject)';
  const list = (pod: string, key: string) => `${pod}.?spec.?${key}.orValue([])`;
  const annotations = (pod: string) => `${pod}.?metadata.?annotations.orValue({})`;
  const seccomp = (pod: string, c: string) =>
    `${annotations(pod)}[?(${celString(SECCOMP_CONTAINER_ANNOTATION_PREFIX)} + ${c}.?name.orValue(''))].orValue('')`;
  const images = (pod: string, key: string) => `${list(pod, key)}.map(c, c.?image.orValue(''))`;
  const containerLists = ['containers', 'initContainers'].map(
    (key) =>
      `size(${list(now, key)}) != size(${list(old, key)}) || ${images(now, key)} != ${images(old, key)} || ${list(now, key)}.map(c, ${seccomp(now, 'c')}) != ${list(now, key)}.map(c, ${seccomp(old, 'c')})`,
  );
  const ephemeral = `${list(now, 'ephemeralContainers')}.exists(c, !${list(old, 'ephemeralContainers')}.exists(o, o.?name.orValue('') == c.?name.orValue('') && o.?image.orValue('') == c.?image.orValue('')) || ${seccomp(now, 'c')} != ${seccomp(old, 'c')})`;
  return [...containerLists, ephemeral].join(' || ');
})();

function exemptions(config: PodSecurityPluginConfig): NamedExpression[] {
  const { namespaces, usernames, runtimeClasses } = config.exemptions;
  const inList = (value: string, list: ReadonlySet<string>) =>
    list.size === 0 ? 'false' : `${value} in ${celStrings([...list].sort(byBytes))}`;
  return [
    { name: 'isPod', expression: "request.resource.resource == 'pods'" },
    { name: 'exemptNamespace', expression: inList('request.namespace', namespaces) },
    { name: 'exemptUser', expression: inList("request.userInfo.?username.orValue('')", usernames) },
    { name: 'exemptRuntimeClass', expression: inList(`${v('spec')}.?runtimeClassName.orValue('')`, runtimeClasses) },
    {
      name: 'insignificantUpdate',
      expression: `${v('isPod')} && request.operation == 'UPDATE' && oldObject != null && !(${SIGNIFICANT_UPDATE})`,
    },
    // Upstream's shortcut: a pod in a fully privileged namespace, a workload where warn and audit are privileged.
    {
      name: 'privilegedShortcut',
      expression: `${v('warnLevel')} == 'privileged' && ${v('auditLevel')} == 'privileged' && (!${v('isPod')} || ${v('enforceLevel')} == 'privileged')`,
    },
    // A ReplicationController without a template has no pods to judge.
    {
      name: 'noTemplate',
      expression: "request.resource.resource == 'replicationcontrollers' && !dyn(object).?spec.?template.hasValue()",
    },
    {
      name: 'exempt',
      expression: `${v('exemptNamespace')} ? 'namespace' : ${v('exemptUser')} ? 'user' : ${v('privilegedShortcut')} || ${v('insignificantUpdate')} || ${v('noTemplate')} ? '' : ${v('exemptRuntimeClass')} ? 'runtimeClass' : ''`,
    },
    {
      name: 'judged',
      expression: `!${v('exemptNamespace')} && !${v('exemptUser')} && !${v('privilegedShortcut')} && !${v('insignificantUpdate')} && !${v('noTemplate')} && !${v('exemptRuntimeClass')}`,
    },
  ];
}

/** What a policy message holds at most (celconfig.MaxEvaluatedMessageExpressionSizeBytes). */
const TOO_LONG = 'the details exceed the 5 KiB a policy message may hold';

export const podSecurity: NativeCompiler<PodSecurityPluginConfig> = {
  name: 'pod-security',
  compile(config) {
    const variables = [
      ...levels(config.defaults),
      ...POD_VARIABLES,
      ...exemptions(config),
      ...checkVariables(),
      results('enforce'),
    ];
    const enforceDenies = `${v('enforceLevel')} != 'privileged' && size(${v('enforceResults')}) > 0`;
    const policies: ValidatingPolicy[] = [
      {
        kind: 'ValidatingAdmissionPolicy',
        part: 'enforce',
        rules: POD_RULES,
        variables,
        validations: [
          {
            expression: `!${v('judged')} || !(${enforceDenies})`,
            messageExpression: `'violates PodSecurity "' + ${lv('enforce')} + '": ' + ${v('enforceResults')}.join(${SEPARATOR})`,
            message: `violates PodSecurity (${TOO_LONG})`,
          },
        ],
        auditAnnotations: [
          {
            key: 'enforce-policy',
            // An empty value is no annotation (the apiserver refuses a null beside a string here).
            valueExpression: `${v('exemptNamespace')} || ${v('exemptUser')} ? '' : ${v('privilegedShortcut')} ? 'privileged:latest' : ${v('judged')} ? ${lv('enforce')} : ''`,
          },
        ],
        validationActions: 'Deny',
      },
      {
        kind: 'ValidatingAdmissionPolicy',
        part: 'warn',
        rules: WORKLOAD_RULES,
        variables: [...variables, results('warn')],
        validations: [
          {
            // A refused pod gets no warning, as upstream.
            expression: `!${v('judged')} || (${v('isPod')} && ${enforceDenies}) || ${v('warnLevel')} == 'privileged' || size(${v('warnResults')}) == 0`,
            messageExpression: `'would violate PodSecurity "' + ${lv('warn')} + '": ' + ${v('warnResults')}.join(${SEPARATOR})`,
            message: `would violate PodSecurity (${TOO_LONG})`,
          },
        ],
        validationActions: 'Warn',
      },
      {
        kind: 'ValidatingAdmissionPolicy',
        part: 'audit',
        rules: WORKLOAD_RULES,
        variables: [...variables.filter((x) => x.name !== 'enforceResults'), results('audit')],
        validations: [
          {
            expression: `!${v('judged')} || ${v('auditLevel')} == 'privileged' || size(${v('auditResults')}) == 0`,
            messageExpression: `'would violate PodSecurity "' + ${lv('audit')} + '": ' + ${v('auditResults')}.join(${SEPARATOR})`,
            message: `would violate PodSecurity (${TOO_LONG})`,
          },
        ],
        auditAnnotations: [{ key: 'exempt', valueExpression: v('exempt') }],
        validationActions: 'Audit',
      },
    ];
    return { policies, differences: podSecurityDifferences, warnings: besideTheBuiltIn(config) };
  },
};

/**
 * The built-in PodSecurity runs on every cluster, before any policy, on the same labels, with no
 * exemptions: a pod it refuses never reaches the policies. So an exemption only takes effect where
 * the namespace's own enforce label admits the pod (unlabelled, or labelled privileged).
 */
export function besideTheBuiltIn(config: PodSecurityPluginConfig): string[] {
  const { usernames, runtimeClasses, namespaces } = config.exemptions;
  const where =
    'the built-in PodSecurity, which the cluster runs first on the same labels and without exemptions, still refuses them in a namespace labelled pod-security.kubernetes.io/enforce=baseline or restricted; the exemption takes effect only in namespaces without that label (or labelled privileged)';
  const list = (values: ReadonlySet<string>) => [...values].sort(byBytes).join(', ');
  return [
    ...(usernames.size > 0 ? [`exemptions.usernames (${list(usernames)}): ${where}`] : []),
    ...(runtimeClasses.size > 0 ? [`exemptions.runtimeClasses (${list(runtimeClasses)}): ${where}`] : []),
    ...(namespaces.size > 0
      ? [
          `exemptions.namespaces (${list(namespaces)}): ${where}; remove the label from an exempt namespace to exempt it`,
        ]
      : []),
  ];
}

export const podSecurityDifferences: readonly string[] = [
  "warnings and audit records carry the apiserver's policy prefix, and audit annotations the policy's name",
  'Namespace writes are not judged: the built-in PodSecurity, which every cluster runs, refuses invalid label values',
  'a namespace with an invalid label gets no `error` audit annotation (it is judged as upstream judges it)',
];
