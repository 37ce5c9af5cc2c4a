// The Pod Security Standards checks as CEL, for the PodSecurity policies (pod-security.ts). Each
// check reads the pod (or a workload's pod template) through a few shared variables and yields
// upstream's `reason (detail)` for a failed check, or '' where it passes, with upstream's words
// (policy/check_*.go, as functions/pod-security/policy ports them).
//
// What the policies run on 1.30 has no sort() or distinct() (cel-go's lists extension reaches
// policies in 1.35) and no two-variable comprehensions, so two helpers stand in: `sortedSet`
// (upstream's sets.NewString(...).List()) ranks every value by the values less than it and picks
// them by rank; `flattened` joins per-container string lists with a separator no Kubernetes
// name holds and splits them again. Parts a check shares between policy versions are variables
// of their own, so each gets its own per-expression cost limit and is evaluated once per policy.
// The lists of allowed and named values (capabilities, volume sources, sysctls, profile types,
// SELinux types, annotation keys) are the webhook plugin's own (functions/pod-security/policy).
import type { NamedExpression } from '../policy.js';
import { BASELINE_CAPABILITIES } from '../../../functions/pod-security/policy/privileges.js';
import {
  ALLOWED_APPARMOR_TYPES,
  APPARMOR_ANNOTATION_PREFIX,
  SECCOMP_CONTAINER_ANNOTATION_PREFIX,
  SECCOMP_POD_ANNOTATION,
  SELINUX_TYPES_1_0,
  SELINUX_TYPES_1_31,
  VALID_SECCOMP_TYPES,
} from '../../../functions/pod-security/policy/profiles.js';
import { SAFE_SYSCTLS } from '../../../functions/pod-security/policy/sysctls.js';
import { ALLOWED_VOLUME_SOURCES, NAMED_VOLUME_SOURCES } from '../../../functions/pod-security/policy/volumes.js';
import { celString, celStrings } from '../policy.js';

export const v = (name: string): string => `variables.${name}`;

/** Far beyond what a pod holds: above it, sortedSet keeps the values as they come (a listed difference). */
export const SORT_LIMIT = 256;
const INDEXES = `[${Array.from({ length: SORT_LIMIT }, (_, i) => i).join(', ')}]`;

/** A character no capability, port, host or annotation of an admitted pod holds. */
const SEPARATOR = String.raw`'\u0001'`;

/** One list of strings from a list of lists of strings. */
const flattened = (lists: string) =>
  `${lists}.map(l, l.join(${SEPARATOR})).filter(s, s != '').join(${SEPARATOR}).split(${SEPARATOR}).filter(s, s != '')`;

/** `<name>` (sorted, distinct) from `<name>All`, through `<name>Ranks`. */
function sortedSet(name: string, list: string): NamedExpression[] {
  const all = v(`${name}All`);
  const ranks = v(`${name}Ranks`);
  return [
    { name: `${name}All`, expression: list },
    { name: `${name}Ranks`, expression: `${all}.map(x, ${all}.filter(y, y < x).size())` },
    {
      name,
      expression: `size(${all}) <= 1 ? ${all} : size(${all}) > ${SORT_LIMIT} ? ${all} : ${v('indexes')}.filter(i, i < size(${all}) && i in ${ranks}).map(i, ${all}[${ranks}.indexOf(i)])`,
    },
  ];
}

const plural = (count: string, one: string, many: string) => `(${count} == 1 ? ${celString(one)} : ${celString(many)})`;
/** joinQuote: `"a", "b"`, as upstream (no escaping). */
const joinQuote = (list: string) => `('"' + ${list}.join('", "') + '"')`;
/** `container "a"` / `containers "a", "b"`. */
const containersPhrase = (names: string) =>
  `(${plural(`size(${names})`, 'container ', 'containers ')} + ${joinQuote(names)})`;
/** `pod and containers "a", "b"`: who set a forbidden value. */
const setters = (pod: string, names: string) =>
  `((${pod} ? ['pod'] : []) + (size(${names}) > 0 ? [${containersPhrase(names)}] : []))`;
const result = (condition: string, reason: string, detail: string) =>
  `(${condition} ? ${reason} + ' (' + ${detail} + ')' : '')`;

const SC = (c: string) => `${c}.?securityContext`;
const POD_SC = `${v('spec')}.?securityContext`;
const names = (filter: string) => `${v('containers')}.filter(c, ${filter}).map(c, c.?name.orValue(''))`;

const SECCOMP_OK = celStrings(VALID_SECCOMP_TYPES);
const APPARMOR_OK = celStrings(ALLOWED_APPARMOR_TYPES);

/**
 * The variables every check reads: the pod (a Pod, or a workload's pod template), its metadata,
 * spec and annotations, and its containers in upstream's visiting order (init, regular, ephemeral).
 * `object` is read as dyn: one policy matches Pods and workloads, whose types have different fields.
 */
export const POD_VARIABLES: readonly NamedExpression[] = [
  {
    name: 'pod',
    expression:
      "request.resource.resource == 'pods' ? dyn(object) : request.resource.resource == 'podtemplates' ? dyn(object).?template.orValue({}) : request.resource.resource == 'cronjobs' ? dyn(object).?spec.?jobTemplate.?spec.?template.orValue({}) : dyn(object).?spec.?template.orValue({})",
  },
  { name: 'spec', expression: `${v('pod')}.?spec.orValue({})` },
  { name: 'annotations', expression: `${v('pod')}.?metadata.?annotations.orValue({})` },
  {
    name: 'containers',
    expression: `${v('spec')}.?initContainers.orValue([]) + ${v('spec')}.?containers.orValue([]) + ${v('spec')}.?ephemeralContainers.orValue([])`,
  },
  { name: 'volumes', expression: `${v('spec')}.?volumes.orValue([])` },
  { name: 'windows', expression: `${v('spec')}.?os.?name.orValue('') == 'windows'` },
  { name: 'userNamespace', expression: `${v('spec')}.?hostUsers.orValue(true) == false` },
  { name: 'indexes', expression: INDEXES },
];

/** One check: the variables it needs (mode-independent) and its result at a policy minor version `m`. */
export interface CheckCel {
  readonly variables: readonly NamedExpression[];
  /** CEL for `reason (detail)` or '' at minor version `m` (a CEL int). */
  readonly result: (m: string) => string;
}

const capabilityAdds = (c: string) => `${SC(c)}.?capabilities.?add.orValue([])`;

const procMountVariables: NamedExpression[] = [
  {
    name: 'procMountBad',
    expression: names(`${SC('c')}.?procMount.orValue('Default') != 'Default'`),
  },
  ...sortedSet(
    'procMountTypes',
    `${v('containers')}.map(c, ${SC('c')}.?procMount.orValue('Default')).filter(t, t != 'Default')`,
  ),
];
const procMountResult = result(
  `size(${v('procMountBad')}) > 0`,
  "'procMount'",
  `${containersPhrase(v('procMountBad'))} + ' must not set securityContext.procMount to ' + ${joinQuote(v('procMountTypes'))}`,
);

/** Every check, by upstream's ID. */
export const CHECK_CEL: Readonly<Record<string, CheckCel>> = {
  appArmorProfile: {
    variables: [
      {
        name: 'appArmorPodBad',
        expression: `${POD_SC}.?appArmorProfile.hasValue() && !(${POD_SC}.?appArmorProfile.?type.orValue('') in ${APPARMOR_OK})`,
      },
      {
        name: 'appArmorBad',
        expression: names(
          `${SC('c')}.?appArmorProfile.hasValue() && !(${SC('c')}.?appArmorProfile.?type.orValue('') in ${APPARMOR_OK})`,
        ),
      },
      ...sortedSet(
        'appArmorTypes',
        `(${v('appArmorPodBad')} ? [${POD_SC}.?appArmorProfile.?type.orValue('')] : []) + ${v('containers')}.filter(c, ${SC('c')}.?appArmorProfile.hasValue() && !(${SC('c')}.?appArmorProfile.?type.orValue('') in ${APPARMOR_OK})).map(c, ${SC('c')}.?appArmorProfile.?type.orValue(''))`,
      ),
      ...sortedSet(
        'appArmorAnnotations',
        `${v('annotations')}.filter(k, k.startsWith(${celString(APPARMOR_ANNOTATION_PREFIX)}) && !(${v('annotations')}[k] == '' || ${v('annotations')}[k] == 'runtime/default' || ${v('annotations')}[k].startsWith('localhost/'))).map(k, k + '="' + ${v('annotations')}[k] + '"')`,
      ),
      {
        name: 'appArmorValues',
        expression: `${v('appArmorTypes')} + ${v('appArmorAnnotations')}`,
      },
      {
        name: 'appArmorSetters',
        expression: `${setters(v('appArmorPodBad'), v('appArmorBad'))} + (size(${v('appArmorAnnotations')}) > 0 ? [${plural(`size(${v('appArmorAnnotations')})`, 'annotation', 'annotations')}] : [])`,
      },
    ],
    result: () =>
      result(
        `size(${v('appArmorSetters')}) > 0`,
        plural(`size(${v('appArmorValues')})`, 'forbidden AppArmor profile', 'forbidden AppArmor profiles'),
        `${v('appArmorSetters')}.join(' and ') + ' must not set AppArmor profile type to ' + ${joinQuote(v('appArmorValues'))}`,
      ),
  },
  capabilities_baseline: {
    variables: [
      {
        name: 'capabilitiesBaselineBad',
        expression: names(`${capabilityAdds('c')}.exists(a, !(a in ${celStrings(BASELINE_CAPABILITIES)}))`),
      },
      ...sortedSet(
        'capabilitiesBaselineAdded',
        flattened(
          `${v('containers')}.map(c, ${capabilityAdds('c')}.filter(a, !(a in ${celStrings(BASELINE_CAPABILITIES)})))`,
        ),
      ),
    ],
    result: () =>
      result(
        `size(${v('capabilitiesBaselineBad')}) > 0`,
        "'non-default capabilities'",
        `${containersPhrase(v('capabilitiesBaselineBad'))} + ' must not include ' + ${joinQuote(v('capabilitiesBaselineAdded'))} + ' in securityContext.capabilities.add'`,
      ),
  },
  hostNamespaces: {
    variables: [
      {
        name: 'hostNamespaces',
        expression: `(${v('spec')}.?hostNetwork.orValue(false) == true ? ['hostNetwork=true'] : []) + (${v('spec')}.?hostPID.orValue(false) == true ? ['hostPID=true'] : []) + (${v('spec')}.?hostIPC.orValue(false) == true ? ['hostIPC=true'] : [])`,
      },
    ],
    result: () => result(`size(${v('hostNamespaces')}) > 0`, "'host namespaces'", `${v('hostNamespaces')}.join(', ')`),
  },
  hostPathVolumes: {
    variables: [
      {
        name: 'hostPathVolumes',
        expression: `${v('volumes')}.filter(x, has(x.hostPath)).map(x, x.?name.orValue(''))`,
      },
    ],
    result: () =>
      result(
        `size(${v('hostPathVolumes')}) > 0`,
        "'hostPath volumes'",
        `${plural(`size(${v('hostPathVolumes')})`, 'volume ', 'volumes ')} + ${joinQuote(v('hostPathVolumes'))}`,
      ),
  },
  hostPorts: {
    variables: [
      {
        name: 'hostPortsBad',
        expression: names(`c.?ports.orValue([]).exists(p, p.?hostPort.orValue(0) != 0)`),
      },
      ...sortedSet(
        'hostPorts',
        flattened(
          `${v('containers')}.map(c, c.?ports.orValue([]).filter(p, p.?hostPort.orValue(0) != 0).map(p, string(p.hostPort)))`,
        ),
      ),
    ],
    result: () =>
      result(
        `size(${v('hostPortsBad')}) > 0`,
        "'hostPort'",
        `${containersPhrase(v('hostPortsBad'))} + ' ' + ${plural(`size(${v('hostPortsBad')})`, 'uses', 'use')} + ' ' + ${plural(`size(${v('hostPorts')})`, 'hostPort', 'hostPorts')} + ' ' + ${v('hostPorts')}.join(', ')`,
      ),
  },
  hostProbesAndHostLifecycle: {
    variables: [
      ...sortedSet(
        'probeHostsBad',
        `${v('containers')}.filter(c, [c.?livenessProbe, c.?readinessProbe, c.?startupProbe, c.?lifecycle.?postStart, c.?lifecycle.?preStop].exists(h, h.?httpGet.?host.orValue('') != '' || h.?tcpSocket.?host.orValue('') != '')).map(c, c.?name.orValue(''))`,
      ),
      ...sortedSet(
        'probeHosts',
        flattened(
          `${v('containers')}.map(c, [c.?livenessProbe.?httpGet.?host.orValue(''), c.?livenessProbe.?tcpSocket.?host.orValue(''), c.?readinessProbe.?httpGet.?host.orValue(''), c.?readinessProbe.?tcpSocket.?host.orValue(''), c.?startupProbe.?httpGet.?host.orValue(''), c.?startupProbe.?tcpSocket.?host.orValue(''), c.?lifecycle.?postStart.?httpGet.?host.orValue(''), c.?lifecycle.?postStart.?tcpSocket.?host.orValue(''), c.?lifecycle.?preStop.?httpGet.?host.orValue(''), c.?lifecycle.?preStop.?tcpSocket.?host.orValue('')].filter(h, h != ''))`,
        ),
      ),
    ],
    result: () =>
      result(
        `size(${v('probeHostsBad')}) > 0`,
        "'probe or lifecycle host'",
        `${containersPhrase(v('probeHostsBad'))} + ' ' + ${plural(`size(${v('probeHostsBad')})`, 'uses', 'use')} + ' ' + ${plural(`size(${v('probeHosts')})`, 'probe or lifecycle host', 'probe or lifecycle hosts')} + ' ' + ${joinQuote(v('probeHosts'))}`,
      ),
  },
  privileged: {
    variables: [{ name: 'privileged', expression: names(`${SC('c')}.?privileged.orValue(false) == true`) }],
    result: () =>
      result(
        `size(${v('privileged')}) > 0`,
        "'privileged'",
        `${containersPhrase(v('privileged'))} + ' must not set securityContext.privileged=true'`,
      ),
  },
  procMount: {
    variables: procMountVariables,
    // From 1.35 the baseline lets pods in a user namespace unmask /proc.
    result: (m) => `${m} >= 35 && ${v('userNamespace')} ? '' : ${procMountResult}`,
  },
  procMount_restricted: { variables: procMountVariables, result: () => procMountResult },
  seLinuxOptions: {
    variables: [
      { name: 'seLinuxTypes0', expression: celStrings(SELINUX_TYPES_1_0) },
      { name: 'seLinuxTypes31', expression: celStrings(SELINUX_TYPES_1_31) },
      { name: 'seLinuxPodSet', expression: `${POD_SC}.?seLinuxOptions.hasValue()` },
      { name: 'seLinuxPod', expression: `${POD_SC}.?seLinuxOptions.orValue({})` },
      ...(['0', '31'] as const).flatMap((at) => {
        const types = v(`seLinuxTypes${at}`);
        const bad = (x: string) =>
          `(!(${x}.?type.orValue('') in ${types}) || ${x}.?user.orValue('') != '' || ${x}.?role.orValue('') != '')`;
        const podBad = v(`seLinuxPodBad${at}`);
        const containers = v(`seLinuxBad${at}`);
        const options = v(`seLinuxBadOptions${at}`);
        const typesList = v(`seLinuxBadTypes${at}`);
        const data = `(size(${typesList}) > 0 ? [${plural(`size(${typesList})`, 'type ', 'types ')} + ${joinQuote(typesList)}] : []) + (${options}.exists(x, x.?user.orValue('') != '') ? ['user may not be set'] : []) + (${options}.exists(x, x.?role.orValue('') != '') ? ['role may not be set'] : [])`;
        return [
          { name: `seLinuxPodBad${at}`, expression: `${v('seLinuxPodSet')} && ${bad(v('seLinuxPod'))}` },
          {
            name: `seLinuxBad${at}`,
            expression: `${v('containers')}.filter(c, ${SC('c')}.?seLinuxOptions.hasValue() && ${bad('c.securityContext.seLinuxOptions')})`,
          },
          {
            name: `seLinuxBadOptions${at}`,
            expression: `(${podBad} ? [${v('seLinuxPod')}] : []) + ${containers}.map(c, c.securityContext.seLinuxOptions)`,
          },
          ...sortedSet(`seLinuxBadTypes${at}`, `${options}.map(x, x.?type.orValue('')).filter(t, !(t in ${types}))`),
          {
            name: `seLinuxResult${at}`,
            expression: result(
              `size(${options}) > 0`,
              "'seLinuxOptions'",
              `${setters(podBad, `${containers}.map(c, c.?name.orValue(''))`)}.join(' and ') + ' set forbidden securityContext.seLinuxOptions: ' + (${data}).join('; ')`,
            ),
          },
        ];
      }),
    ],
    result: (m) => `${m} >= 31 ? ${v('seLinuxResult31')} : ${v('seLinuxResult0')}`,
  },
  seccompProfile_baseline: {
    variables: [
      // Before 1.19, annotations only.
      ...sortedSet(
        'seccompAnnotations',
        `([${celString(SECCOMP_POD_ANNOTATION)}] + ${v('containers')}.map(c, ${celString(SECCOMP_CONTAINER_ANNOTATION_PREFIX)} + c.?name.orValue(''))).filter(k, k in ${v('annotations')} && !(${v('annotations')}[k] == 'runtime/default' || ${v('annotations')}[k] == 'docker/default' || ${v('annotations')}[k].startsWith('localhost/'))).map(k, k + '="' + ${v('annotations')}[k] + '"')`,
      ),
      {
        name: 'seccompPodBad',
        expression: `${POD_SC}.?seccompProfile.hasValue() && !(${POD_SC}.?seccompProfile.?type.orValue('') in ${SECCOMP_OK})`,
      },
      {
        name: 'seccompBad',
        expression: names(
          `${SC('c')}.?seccompProfile.hasValue() && !(${SC('c')}.?seccompProfile.?type.orValue('') in ${SECCOMP_OK})`,
        ),
      },
      ...sortedSet(
        'seccompBadTypes',
        `(${v('seccompPodBad')} ? [${POD_SC}.?seccompProfile.?type.orValue('')] : []) + ${v('containers')}.filter(c, ${SC('c')}.?seccompProfile.hasValue() && !(${SC('c')}.?seccompProfile.?type.orValue('') in ${SECCOMP_OK})).map(c, ${SC('c')}.?seccompProfile.?type.orValue(''))`,
      ),
      {
        name: 'seccompExplicit',
        expression: result(
          `${v('seccompPodBad')} || size(${v('seccompBad')}) > 0`,
          "'seccompProfile'",
          `${setters(v('seccompPodBad'), v('seccompBad'))}.join(' and ') + ' must not set securityContext.seccompProfile.type to ' + ${joinQuote(v('seccompBadTypes'))}`,
        ),
      },
    ],
    result: (m) =>
      `${m} >= 19 ? ${v('seccompExplicit')} : ${result(
        `size(${v('seccompAnnotations')}) > 0`,
        "'seccompProfile'",
        `'forbidden ' + ${plural(`size(${v('seccompAnnotations')})`, 'annotation ', 'annotations ')} + ${v('seccompAnnotations')}.join(', ')`,
      )}`,
  },
  sysctls: {
    variables: [
      {
        name: 'sysctlNames',
        expression: `${POD_SC}.?sysctls.orValue([]).map(s, s.?name.orValue(''))`,
      },
    ],
    result: (m) => {
      const safeAt = (i: number) => celStrings(SAFE_SYSCTLS.slice(0, i + 1).flatMap(([, names]) => names));
      const safe = SAFE_SYSCTLS.map(([since], i) => [since, safeAt(i)] as const).reduce(
        (older, [since, list]) => (since === 0 ? list : `(${m} >= ${since} ? ${list} : ${older})`),
        '',
      );
      const bad = `${v('sysctlNames')}.filter(n, !(n in ${safe}))`;
      return result(`size(${bad}) > 0`, "'forbidden sysctls'", `${bad}.join(', ')`);
    },
  },
  windowsHostProcess: {
    variables: [
      {
        name: 'hostProcessPod',
        expression: `${POD_SC}.?windowsOptions.?hostProcess.orValue(false) == true`,
      },
      { name: 'hostProcess', expression: names(`${SC('c')}.?windowsOptions.?hostProcess.orValue(false) == true`) },
    ],
    result: () =>
      result(
        `${v('hostProcessPod')} || size(${v('hostProcess')}) > 0`,
        "'hostProcess'",
        `${setters(v('hostProcessPod'), v('hostProcess'))}.join(' and ') + ' must not set securityContext.windowsOptions.hostProcess=true'`,
      ),
  },
  allowPrivilegeEscalation: {
    variables: [
      {
        name: 'privilegeEscalation',
        expression: names(`${SC('c')}.?allowPrivilegeEscalation.orValue(true) != false`),
      },
    ],
    // From 1.25 Windows pods need not set it (pod validation refuses it there).
    result: (m) =>
      `${m} >= 25 && ${v('windows')} ? '' : ${result(
        `size(${v('privilegeEscalation')}) > 0`,
        "'allowPrivilegeEscalation != false'",
        `${containersPhrase(v('privilegeEscalation'))} + ' must set securityContext.allowPrivilegeEscalation=false'`,
      )}`,
  },
  capabilities_restricted: {
    variables: [
      {
        name: 'capabilitiesNoDropAll',
        expression: names(`!(${SC('c')}.?capabilities.?drop.orValue([]).exists(d, d == 'ALL'))`),
      },
      {
        name: 'capabilitiesRestrictedBad',
        expression: names(`${capabilityAdds('c')}.exists(a, a != 'NET_BIND_SERVICE')`),
      },
      ...sortedSet(
        'capabilitiesRestrictedAdded',
        flattened(`${v('containers')}.map(c, ${capabilityAdds('c')}.filter(a, a != 'NET_BIND_SERVICE'))`),
      ),
      {
        name: 'capabilitiesRestricted',
        expression: (() => {
          const details = `(size(${v('capabilitiesNoDropAll')}) > 0 ? [${containersPhrase(v('capabilitiesNoDropAll'))} + ' must set securityContext.capabilities.drop=["ALL"]'] : []) + (size(${v('capabilitiesRestrictedBad')}) > 0 ? [${containersPhrase(v('capabilitiesRestrictedBad'))} + ' must not include ' + ${joinQuote(v('capabilitiesRestrictedAdded'))} + ' in securityContext.capabilities.add'] : [])`;
          return result(`size(${details}) > 0`, "'unrestricted capabilities'", `(${details}).join('; ')`);
        })(),
      },
    ],
    result: (m) => `${m} >= 25 && ${v('windows')} ? '' : ${v('capabilitiesRestricted')}`,
  },
  restrictedVolumes: {
    variables: [
      {
        name: 'restrictedVolumes',
        expression: `${v('volumes')}.filter(x, !(${ALLOWED_VOLUME_SOURCES.map((s) => `has(x.${s})`).join(' || ')}))`,
      },
      {
        name: 'restrictedVolumeTypes',
        expression: `${v('restrictedVolumes')}.map(x, ${NAMED_VOLUME_SOURCES.map((s) => `has(x.${s}) ? '${s}' : `).join('')}'unknown')`,
      },
    ],
    result: () => {
      const volumes = v('restrictedVolumes');
      // The possible types are known: their sorted set is the sorted list of them, filtered.
      const types = `${celStrings([...NAMED_VOLUME_SOURCES, 'unknown'].sort())}.filter(t, t in ${v('restrictedVolumeTypes')})`;
      return result(
        `size(${volumes}) > 0`,
        "'restricted volume types'",
        `${plural(`size(${volumes})`, 'volume ', 'volumes ')} + ${joinQuote(`${volumes}.map(x, x.?name.orValue(''))`)} + ' ' + ${plural(`size(${volumes})`, 'uses', 'use')} + ' ' + ${plural(`size(${types})`, 'restricted volume type ', 'restricted volume types ')} + ${joinQuote(types)}`,
      );
    },
  },
  runAsNonRoot: {
    variables: [
      { name: 'runAsNonRootPod', expression: `${POD_SC}.?runAsNonRoot` },
      {
        name: 'runAsNonRootExplicit',
        expression: names(`${SC('c')}.?runAsNonRoot.orValue(true) == false`),
      },
      {
        name: 'runAsNonRootImplicit',
        expression: `${v('runAsNonRootPod')}.orValue(false) == true ? [] : ${names(`!${SC('c')}.?runAsNonRoot.hasValue()`)}`,
      },
      {
        name: 'runAsNonRoot',
        expression: (() => {
          const who = setters(`${v('runAsNonRootPod')}.orValue(true) == false`, v('runAsNonRootExplicit'));
          return `size(${who}) > 0 ? 'runAsNonRoot != true (' + ${who}.join(' and ') + ' must not set securityContext.runAsNonRoot=false)' : ${result(
            `size(${v('runAsNonRootImplicit')}) > 0`,
            "'runAsNonRoot != true'",
            `'pod or ' + ${containersPhrase(v('runAsNonRootImplicit'))} + ' must set securityContext.runAsNonRoot=true'`,
          )}`;
        })(),
      },
    ],
    // From 1.35 a pod in a user namespace is root only inside it.
    result: (m) => `${m} >= 35 && ${v('userNamespace')} ? '' : ${v('runAsNonRoot')}`,
  },
  runAsUser: {
    variables: [
      {
        name: 'runAsUserRoot',
        expression: setters(`${POD_SC}.?runAsUser.orValue(-1) == 0`, names(`${SC('c')}.?runAsUser.orValue(-1) == 0`)),
      },
    ],
    result: (m) =>
      `${m} >= 35 && ${v('userNamespace')} ? '' : ${result(
        `size(${v('runAsUserRoot')}) > 0`,
        "'runAsUser=0'",
        `${v('runAsUserRoot')}.join(' and ') + ' must not set runAsUser=0'`,
      )}`,
  },
  seccompProfile_restricted: {
    variables: [
      {
        name: 'seccompPodValid',
        expression: `${POD_SC}.?seccompProfile.hasValue() && ${POD_SC}.?seccompProfile.?type.orValue('') in ${SECCOMP_OK}`,
      },
      {
        name: 'seccompImplicit',
        expression: `${v('seccompPodValid')} ? [] : ${names(`!${SC('c')}.?seccompProfile.hasValue()`)}`,
      },
      {
        name: 'seccompRestricted',
        expression: `${v('seccompPodBad')} || size(${v('seccompBad')}) > 0 ? ${v('seccompExplicit')} : ${result(
          `size(${v('seccompImplicit')}) > 0`,
          "'seccompProfile'",
          `'pod or ' + ${containersPhrase(v('seccompImplicit'))} + ' must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"'`,
        )}`,
      },
    ],
    result: (m) => `${m} >= 25 && ${v('windows')} ? '' : ${v('seccompRestricted')}`,
  },
};
