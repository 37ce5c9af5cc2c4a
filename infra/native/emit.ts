// `npm run emit -- --native --kubernetes-version X.Y`: the active plugins a cluster of that version
// can run itself, as ValidatingAdmissionPolicies and MutatingAdmissionPolicies with their bindings
// (YAML on stdout, before any webhook configuration), one stderr line per plugin saying native or
// webhook and why, and the names of the plugins whose webhook configurations the rest of emit
// prints. Plugins that only an apiserver can serve (they ask its authorizer) come from their own
// registry (native-only.ts), never from functions/index.ts: they have no Lambda.
import { policyResourceRuleViolations } from '../emit/apiserver-validation.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
} from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { stringify } from 'yaml';
import { plugins as registry } from '../../functions/index.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import type { EnvironmentVersion } from '../../lib/cel/cel-env.js';
import { ENVIRONMENT_VERSIONS } from '../../lib/cel/cel-env.js';
import type { ConfiguredPlugin } from '../../lib/config/plugins.js';
import {
  activePlugins,
  configurePlugins,
  inactiveLine,
  inactivePlugins,
  loadPluginSet,
} from '../../lib/config/plugins.js';
import { configurationName, EmitError, SYSTEM_NAMESPACES } from '../emit/webhooks.js';
import { nativeOnlyPlugins } from './native-only.js';
import type { NativeObject } from './objects.js';
import { planPlugin } from './plan.js';
import type { PluginPlan } from './plan.js';
import { atLeast, VALIDATING_SINCE } from './policy.js';

export interface NativeOptions {
  readonly kubernetesVersion: string;
  readonly admissionConfig?: string;
  readonly plugins?: string;
  readonly webhookNamespace?: string;
  readonly stagedNamespace?: string;
  readonly out?: string;
  readonly baseUrl?: string;
}

export interface NativeIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  readonly plugins?: readonly AnyAdmissionPlugin[];
}

export interface NativeEmission {
  readonly objects: readonly NativeObject[];
  /** Served plugins that stay webhooks on this version: the rest of emit prints their configurations. */
  readonly webhooks: readonly string[];
}

const NEWEST = ENVIRONMENT_VERSIONS[ENVIRONMENT_VERSIONS.length - 1];

/** `1.31` (or `v1.31.2`) as the CEL environment the policies compile in; older than 1.30 refused. */
export function environmentFor(kubernetesVersion: string): { environment: EnvironmentVersion; note?: string } {
  const match = /^v?(\d+)\.(\d+)(\.\d+)?$/.exec(kubernetesVersion.trim());
  if (!match)
    throw new EmitError(`--kubernetes-version ${JSON.stringify(kubernetesVersion)} is not X.Y (1.30 and later)`);
  const version = `${Number(match[1])}.${Number(match[2])}`;
  if (!atLeast(version, VALIDATING_SINCE))
    throw new EmitError(
      `--kubernetes-version ${version}: native policies need ValidatingAdmissionPolicy, GA in 1.30; emit without --native`,
    );
  if ((ENVIRONMENT_VERSIONS as readonly string[]).includes(version))
    return { environment: version as EnvironmentVersion };
  return {
    environment: NEWEST,
    note: `Kubernetes ${version} is newer than ${NEWEST}: the policies are compiled and proven for ${NEWEST}, which ${version} also accepts`,
  };
}

/**
 * The admissionregistration.k8s.io/v1 schemas kubernetes-models ships. Its 4.x line has none for
 * MutatingAdmissionPolicy: those objects are held to the apiserver's creation-time validation by
 * the suite instead (the project's MAP engine loads every one).
 */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
};

/** Refuses to print what fails the admissionregistration.k8s.io/v1 schema: a bug, exit 1. */
export function validateNativeSchema(object: NativeObject): void {
  const Model = MODELS[object.kind];
  if (Model === undefined) return;
  try {
    new Model(object as never).validate();
  } catch (error) {
    throw new Error(
      `${object.kind} ${object.metadata.name} fails the ${object.apiVersion} schema: ${(error as Error).message}`,
    );
  }
}

function toYaml(objects: readonly NativeObject[]): string {
  return objects.map((o) => stringify(o, { lineWidth: 0, aliasDuplicateObjects: false })).join('---\n');
}

/** --plugins, split; undefined for every active plugin. */
const namesOf = (list: string | undefined) =>
  list
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function checkNamespaces(options: NativeOptions): void {
  for (const [option, ns] of [
    ['--staged', options.stagedNamespace],
    ['--webhook-namespace', options.webhookNamespace],
  ] as const) {
    if (ns !== undefined && (!DNS_LABEL.test(ns) || ns.length > 63))
      throw new EmitError(`${option}: ${JSON.stringify(ns)} is not a namespace name`);
  }
  if (
    options.stagedNamespace !== undefined &&
    (SYSTEM_NAMESPACES as readonly string[]).includes(options.stagedNamespace)
  )
    throw new EmitError(`--staged ${options.stagedNamespace}: stage in a test namespace, not a system one`);
}

export function emitNative(options: NativeOptions, io: NativeIo): NativeEmission {
  checkNamespaces(options);
  const { environment, note } = environmentFor(options.kubernetesVersion);
  if (note) io.stderr(`note: ${note}\n`);
  const env = {
    ...io.env,
    ...(options.admissionConfig !== undefined && { ADMISSION_CONFIG: options.admissionConfig }),
  };
  const served = loadPluginSet(io.plugins ?? registry, env);
  io.stderr(`configuration: ${served.configuration.source.file}\n`);
  const nativeOnly = configurePlugins(nativeOnlyPlugins, served.configuration);
  const wanted = namesOf(options.plugins);
  const known = [...served.plugins, ...nativeOnly.plugins].map((p) => p.plugin.metadata.name);
  const unknown = wanted?.filter((n) => !known.includes(n)) ?? [];
  if (unknown.length > 0) throw new EmitError(`--plugins: unknown ${unknown.join(', ')}; known: ${known.join(', ')}`);
  const chosen = (list: readonly ConfiguredPlugin[]) =>
    list.filter((p) => wanted === undefined || wanted.includes(p.plugin.metadata.name));

  for (const p of chosen(inactivePlugins(served))) {
    if (wanted !== undefined) throw new EmitError(`--plugins: ${inactiveLine(p)}`);
    io.stderr(`left out: ${inactiveLine(p)}\n`);
  }
  const deployment = { webhookNamespace: options.webhookNamespace, stagedNamespace: options.stagedNamespace };
  const plans: PluginPlan[] = [
    ...chosen(activePlugins(served)).map((p) => planPlugin(p, environment, deployment)),
    // Served only natively: only where their entry names them.
    ...chosen(nativeOnly.plugins.filter((p) => p.hasEntry)).map((p) => planPlugin(p, environment, deployment)),
  ];
  for (const plan of plans) {
    io.stderr(`${plan.line}\n`);
    for (const warning of plan.warnings ?? []) io.stderr(`${warning}\n`);
  }

  const objects = plans.flatMap((p) => p.objects ?? []);
  for (const object of objects) validateNativeSchema(object);
  // What `kubectl apply` would refuse in a policy's rules, in the apiserver's words: never printed.
  const refused = objects
    .filter((o) => o.kind === 'ValidatingAdmissionPolicy' || o.kind === 'MutatingAdmissionPolicy')
    .flatMap((o) => policyResourceRuleViolations(o).map((problem) => `${o.kind} ${o.metadata.name}: ${problem}`));
  if (refused.length > 0) throw new Error(`the apiserver would refuse the policies:\n  ${refused.join('\n  ')}`);
  const nativeNames = plans.filter((p) => p.objects !== undefined).map((p) => p.configured.plugin.metadata.name);
  const isServed = (p: PluginPlan) => served.plugins.includes(p.configured);
  const webhooks = plans
    .filter((p) => p.objects === undefined && isServed(p))
    .map((p) => p.configured.plugin.metadata.name);
  const unserved = plans.filter((p) => p.objects === undefined && !isServed(p));
  for (const p of unserved)
    io.stderr(`not served: ${p.configured.plugin.metadata.upstreamName} has no webhook; it needs a native policy\n`);
  if (webhooks.length > 0 && options.baseUrl === undefined)
    throw new EmitError(
      `--base-url is required: ${webhooks.join(', ')} stay${webhooks.length === 1 ? 's' : ''} webhooks on Kubernetes ${options.kubernetesVersion}`,
    );

  const yaml = `# serverless-admission native admission policies (npm run emit -- --native --kubernetes-version ${options.kubernetesVersion})\n${toYaml(objects)}`;
  if (objects.length > 0) io.stdout(yaml);
  io.stderr(`${objects.length} native object(s) for ${nativeNames.join(', ') || 'no plugin'}\n`);
  if (options.out !== undefined && objects.length > 0) {
    mkdirSync(options.out, { recursive: true });
    const file = join(options.out, 'native-policies.yaml');
    writeFileSync(file, yaml);
    io.stderr(`wrote ${file}\n`);
  }
  if (nativeNames.length > 0) {
    const names = nativeNames.map(configurationName).join(' ');
    io.stderr(
      "switching from webhooks: apply the policies first, then remove those plugins' webhook configurations:\n",
    );
    io.stderr(
      `  kubectl apply -f <the policies>; kubectl delete mutatingwebhookconfiguration,validatingwebhookconfiguration ${names} --ignore-not-found\n`,
    );
  }
  return { objects, webhooks };
}
