// The CEL environment every policy expression runs in: @bufbuild/cel's standard library, its
// strings extension, and Kubernetes' libraries (lists, regex, sets, quantity, url, ip, cidr,
// semver), behind a cost meter that approximates cel-go's runtime cost limits.
//
// Cost model. cel-go charges every step of an evaluation and cancels it past a limit (Kubernetes:
// 1,000,000 per expression, 10,000,000 per policy binding evaluation). @bufbuild/cel has no such
// hook, so the meter wraps every function the planner resolves and charges, per call, 1 plus the
// traversal cost cel-go gives the arguments (0.1 per character of a string, 1 per element of a
// list or map; regex calls multiply by 0.25 per pattern character); compile.ts adds one call per
// comprehension iteration. Field selections and literals are not charged: costs come out lower
// than cel-go's for the same expression, never higher.
import { CelScalar, celEnv, celError, celFunc, isCelList, isCelMap } from '@bufbuild/cel';
import type { CelEnv, CelFunc, CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { listLibrary } from './library/lists.js';
import { networkLibrary } from './library/network.js';
import { quantityLibrary } from './library/quantity.js';
import { semverLibrary } from './library/semver.js';
import { kubernetesTypes } from './library/types.js';

/** Kubernetes' celconfig.PerCallLimit. */
export const PER_EXPRESSION_COST_LIMIT = 1_000_000;
/** Kubernetes' celconfig.RuntimeCELCostBudget: one policy, one binding, one param. */
export const EVALUATION_COST_BUDGET = 10_000_000;
export const COST_LIMIT_EXCEEDED = 'operation cancelled: actual cost limit exceeded';

/** The name compile.ts gives its per-iteration charge; returns its argument. */
export const ITERATION_TICK = '__vap_iteration_cost__';

export const VARIABLE_NAMES = ['object', 'oldObject', 'request', 'params', 'namespaceObject', 'variables', 'authorizer'] as const;

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

/** Runs `evaluate` with `meter` charged for every call it makes. */
export function metered<T>(meter: CostMeter, evaluate: () => T): T {
  const previous = current;
  current = meter;
  try {
    return evaluate();
  } finally {
    current = previous;
  }
}

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
    return 1 + Math.ceil((1 + traversal(text)) * Math.max(1, (typeof pattern === 'string' ? pattern.length : 1) * 0.25));
  }
  let cost = 1 + traversal(target);
  for (const arg of args) cost += traversal(arg);
  return Math.ceil(cost);
}

interface FuncGroup {
  readonly name: string;
  call(id: number, target: CelValue | undefined, args: CelValue[]): unknown;
  [Symbol.iterator](): Iterator<CelFunc>;
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
    [Symbol.iterator]: () => group[Symbol.iterator](),
  };
}

const iterationTick = celFunc(ITERATION_TICK, [CelScalar.DYN], CelScalar.DYN, (value) => value as never);

function buildEnv(): CelEnv {
  const base = celEnv({
    registry: kubernetesTypes,
    funcs: [...strings, ...listLibrary, ...quantityLibrary, ...networkLibrary, ...semverLibrary, iterationTick],
    variables: Object.fromEntries(VARIABLE_NAMES.map((name) => [name, CelScalar.DYN])),
  });
  const inner = base.funcs as unknown as FuncResolver;
  const groups = new Map<string, FuncGroup | undefined>();
  const funcs: FuncResolver = {
    find(name) {
      if (!groups.has(name)) {
        const group = inner.find(name);
        groups.set(name, group && meteredGroup(group));
      }
      return groups.get(name);
    },
    [Symbol.iterator]: () => inner[Symbol.iterator](),
  };
  // plan() reads namespace, registry and funcs; the rest of CelEnv is the checker's.
  return { namespace: base.namespace, registry: base.registry, variables: base.variables, funcs } as unknown as CelEnv;
}

export const policyEnv = buildEnv();

/** Every function name the environment resolves, for compile-time "undeclared reference" checks. */
export const FUNCTION_NAMES: ReadonlySet<string> = new Set([...(policyEnv.funcs as unknown as Iterable<CelFunc>)].map((f) => f.name));
