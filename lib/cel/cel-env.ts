// The CEL environment every policy expression runs in: @bufbuild/cel's standard library, its
// strings extension, cel-go's optional types, and Kubernetes' libraries (lists, regex, sets,
// quantity, url, ip, cidr, semver), versioned as the apiserver's base environment is
// (k8s.io/apiserver/pkg/cel/environment/base.go), behind a cost meter that approximates cel-go's
// runtime cost limits.
//
// Versions. A library enters the base environment in one release and is offered to new policies
// from the next (the apiserver compiles new policies against its n-1 compatibility version).
// `celEnvironment: "1.30"` is the environment a 1.30 apiserver gives a new policy.
//
// Cost model. cel-go charges every step of an evaluation and cancels it past a limit (Kubernetes:
// 1,000,000 per expression, 10,000,000 per policy binding evaluation). The meter wraps every
// function the environment resolves and charges, per call, 1 plus the traversal cost cel-go gives
// the arguments (0.1 per character of a string, 1 per element of a list or map; regex calls
// multiply by 0.25 per pattern character), and 1 per comprehension iteration. Field selections
// and literals are not charged: costs come out lower than cel-go's, never higher.
import { createRegistry } from '@bufbuild/protobuf';
import { CelScalar, celEnv, celError, celFunc, isCelError, isCelList, isCelMap, parse, plan } from '@bufbuild/cel';
import type { CelEnv, CelFunc, CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import type { Runtime } from './interpreter.js';
import { listsExtension, listsLibrary, listsSignatures, regexLibrary, setsLibrary } from './library/lists.js';
import { cidrLibrary, ipLibrary, urlLibrary } from './library/network.js';
import { OPTIONAL_TYPE, optionalLibrary, optionalRegistry } from './library/optional.js';
import { overrides, resultHooks } from './library/overrides.js';
import { quantityLibrary } from './library/quantity.js';
import { semverLibrary } from './library/semver.js';
import { CIDR_TYPE, IP_TYPE, NAMED_FORMAT, QUANTITY, SEMVER, URL_TYPE, kubernetesTypes } from './library/types.js';
import { AUTHORIZER_TYPES, authorizerRegistry, authzLibrary } from './library/authorizer.js';
import { formatLibrary } from './library/format.js';
import { jsonPatchLibrary } from './library/jsonpatch.js';
import type { ParseOptions } from './parser.js';

/** Kubernetes' celconfig.PerCallLimit. */
export const PER_EXPRESSION_COST_LIMIT = 1_000_000;
/** Kubernetes' celconfig.RuntimeCELCostBudget: one policy, one binding, one param. */
export const EVALUATION_COST_BUDGET = 10_000_000;
export const COST_LIMIT_EXCEEDED = 'operation cancelled: actual cost limit exceeded';

export const VARIABLE_NAMES = [
  'object',
  'oldObject',
  'request',
  'params',
  'namespaceObject',
  'variables',
  'authorizer',
] as const;

/** The apiserver versions whose policy environment can be chosen, oldest first. */
export const ENVIRONMENT_VERSIONS = ['1.30', '1.31', '1.32', '1.33', '1.34', '1.35', '1.36'] as const;
export type EnvironmentVersion = (typeof ENVIRONMENT_VERSIONS)[number];
export const DEFAULT_ENVIRONMENT: EnvironmentVersion = '1.36';

/** One evaluation's spending. Evaluation is synchronous, so one meter at a time is current. */
export class CostMeter {
  used = 0;
  exceeded = false;
  constructor(private readonly limit: number) {}

  charge(cost: number): boolean {
    this.used += cost;
    if (this.used > this.limit) this.exceeded = true;
    return !this.exceeded;
  }
}

let current: CostMeter | undefined;

function traversal(value: CelValue | undefined): number {
  if (typeof value === 'string') return value.length * 0.1;
  if (value instanceof Uint8Array) return value.length * 0.1;
  if (isCelList(value) || isCelMap(value)) return value.size;
  return 0;
}

const REGEX_CALLS = new Set(['matches', 'find', 'findAll']);

function callCost(name: string, target: CelValue | undefined, args: CelValue[]): number {
  if (REGEX_CALLS.has(name)) {
    const [text, pattern] = target === undefined ? args : [target, args[0]];
    return (
      1 + Math.ceil((1 + traversal(text)) * Math.max(1, (typeof pattern === 'string' ? pattern.length : 1) * 0.25))
    );
  }
  let cost = 1 + traversal(target);
  for (const arg of args) cost += traversal(arg);
  return Math.ceil(cost);
}

interface FuncGroup {
  readonly name: string;
  call(id: number, target: CelValue | undefined, args: CelValue[]): unknown;
}
interface FuncResolver {
  find(name: string): FuncGroup | undefined;
  [Symbol.iterator](): Iterator<CelFunc>;
}

function meteredGroup(group: FuncGroup): FuncGroup {
  return {
    name: group.name,
    call(id, target, args) {
      if (current && !current.charge(callCost(group.name, target, args))) return celError(COST_LIMIT_EXCEEDED, id);
      return group.call(id, target, args);
    },
  };
}

/** The libraries, each with the first apiserver version that offers it to new policies. */
const LIBRARIES: readonly { readonly since: EnvironmentVersion; readonly funcs: readonly CelFunc[] }[] = [
  {
    since: '1.30',
    funcs: [
      ...strings,
      ...listsLibrary,
      ...regexLibrary,
      ...setsLibrary,
      ...urlLibrary,
      ...quantityLibrary,
      ...optionalLibrary,
      // Declared for every expression; the checker refuses it outside a mutation (patch types).
      ...jsonPatchLibrary,
      ...authzLibrary,
    ],
  },
  { since: '1.31', funcs: [...ipLibrary, ...cidrLibrary] },
  { since: '1.32', funcs: formatLibrary },
  { since: '1.34', funcs: semverLibrary },
  { since: '1.35', funcs: listsExtension },
];

const TYPES: Record<string, { since: EnvironmentVersion; value: CelValue }> = {
  'kubernetes.Quantity': { since: '1.30', value: QUANTITY.type as never },
  'kubernetes.URL': { since: '1.30', value: URL_TYPE.type as never },
  'net.IP': { since: '1.31', value: IP_TYPE.type as never },
  'net.CIDR': { since: '1.31', value: CIDR_TYPE.type as never },
  'kubernetes.Semver': { since: '1.34', value: SEMVER.type as never },
  'kubernetes.NamedFormat': { since: '1.32', value: NAMED_FORMAT.type as never },
  optional_type: { since: '1.30', value: OPTIONAL_TYPE as never },
  ...Object.fromEntries(
    Object.entries(AUTHORIZER_TYPES).map(([n, t]) => [`kubernetes.authorization.${n}`, { since: '1.30', value: t }]),
  ),
};

const registry = createRegistry(kubernetesTypes, optionalRegistry, authorizerRegistry);
const atLeast = (version: EnvironmentVersion, since: EnvironmentVersion) =>
  ENVIRONMENT_VERSIONS.indexOf(version) >= ENVIRONMENT_VERSIONS.indexOf(since);

/** One apiserver version's policy environment. */
export interface PolicyEnvironment extends Runtime {
  readonly version: EnvironmentVersion;
  readonly parse: ParseOptions;
  /** Every function declaration, for the checker's overload resolution. */
  readonly declarations: readonly CelFunc[];
  /** Runs `evaluate` inside @bufbuild/cel's evaluation context, charging `meter` for every call. */
  run(meter: CostMeter, evaluate: () => unknown): unknown;
}

const HOST = '__vap_evaluation__';

/** The group with cel-go's behaviour first where @bufbuild/cel's differs (library/overrides.ts). */
function withOverrides(name: string, group: FuncGroup | undefined): FuncGroup | undefined {
  const first = overrides.filter((f) => f.name === name);
  const after = resultHooks[name];
  if ((first.length === 0 && !after) || !group) return group;
  return {
    name,
    call(id, target, args) {
      for (const f of first) {
        const result = (f as unknown as FuncGroup).call(id, target, args);
        if (result !== undefined) return result;
      }
      const result = group.call(id, target, args);
      after?.(result, args);
      return result;
    },
  };
}

function buildEnvironment(version: EnvironmentVersion): PolicyEnvironment {
  const funcs = LIBRARIES.filter((l) => atLeast(version, l.since)).flatMap((l) => l.funcs);
  let pending: () => unknown = () => null;
  // @bufbuild/cel's functions need its evaluation context (the type registry); a plan of one host
  // call provides it, and the host runs the interpreter inside.
  const host = celFunc(HOST, [], CelScalar.DYN, () => {
    const result = pending();
    if (isCelError(result)) throw result;
    return result as never;
  });
  const base: CelEnv = celEnv({ registry, funcs: [...funcs, host], variables: {} });
  const resolver = base.funcs as unknown as FuncResolver;
  const hostPlan = plan(base, parse(`${HOST}()`));
  const groups = new Map<string, FuncGroup | undefined>();
  // The checker sees lists.go's typed overloads in place of the list(dyn) ones that evaluate.
  const typed = new Set(listsSignatures.map((f) => f.name));
  const declarations = [
    ...[...resolver].filter((f) => f.name !== HOST && !(typed.has(f.name) && f.target?.kind === 'list')),
    ...listsSignatures,
  ];
  return {
    version,
    parse: { twoVariableComprehensions: atLeast(version, '1.33'), listsExtension: atLeast(version, '1.35') },
    declarations,
    costError: COST_LIMIT_EXCEEDED,
    find(name) {
      if (!groups.has(name)) {
        const group = name === HOST ? undefined : withOverrides(name, resolver.find(name));
        groups.set(name, group && meteredGroup(group));
      }
      return groups.get(name);
    },
    typeValue(name) {
      const type = TYPES[name];
      return type && atLeast(version, type.since) ? type.value : undefined;
    },
    iterate() {
      return !current || current.charge(1);
    },
    run(meter, evaluate) {
      const previous = current;
      const previousPending = pending;
      current = meter;
      pending = evaluate;
      try {
        return hostPlan({});
      } finally {
        current = previous;
        pending = previousPending;
      }
    },
  };
}

const environments = new Map<EnvironmentVersion, PolicyEnvironment>();

export function policyEnvironment(version: EnvironmentVersion = DEFAULT_ENVIRONMENT): PolicyEnvironment {
  let env = environments.get(version);
  if (!env) {
    env = buildEnvironment(version);
    environments.set(version, env);
  }
  return env;
}
