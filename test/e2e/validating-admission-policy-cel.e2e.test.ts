// The project's CEL against the real apiserver's: each case is a ValidatingAdmissionPolicy whose one
// validation denies a ConfigMap, created on a v1.36 control plane and loaded, the same YAML, into the
// project's ValidatingAdmissionPolicy plugin. The apiserver's denial message (a format call's text,
// a literal's value, an evaluation error or `failed expression: ...`) must be the project's, word
// for word.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PluginConfig } from '../../functions/validating-admission-policy/config.js';
import plugin from '../../functions/validating-admission-policy/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { ConfigError } from '../../lib/config/errors.js';
import { deniedMessage, runPhase } from '../support/review.js';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';

interface Case {
  /** What the case shows. */
  readonly title: string;
  readonly expression: string;
  readonly messageExpression?: string;
  /** A paramKind, and a binding without paramRef: the expression sees `params` as null. */
  readonly nullParams?: true;
}

const CASES: readonly Case[] = [
  // cel-go's %e through golang.org/x/text: `×10` and superscript exponent digits, no spaces.
  { title: '%e', expression: 'false', messageExpression: "'%e'.format([3.14])" },
  { title: '%.6e', expression: 'false', messageExpression: "'%.6e'.format([1052.032911275])" },
  { title: '%e, negative exponent', expression: 'false', messageExpression: "'%e'.format([-0.00012345])" },
  { title: '%.3e (a width to x/text)', expression: 'false', messageExpression: "'%.3e'.format([2.5])" },
  { title: '%e of zero', expression: 'false', messageExpression: "'%e'.format([0.0])" },
  // Mixed literals anywhere under a format call: list(dyn) and map(string, dyn), accepted.
  {
    title: 'a nested mixed list under format, sized',
    expression: 'false',
    messageExpression: "'%s'.format([[[1, 2, [3.0, 4]]].size()])",
  },
  {
    title: 'a nested mixed list under format, indexed',
    expression: 'false',
    messageExpression: "'%s'.format([[[1, 2, [3.0, 4]]][0]])",
  },
  {
    title: 'a map with mixed values under format, indexed',
    expression: 'false',
    messageExpression: "'%s'.format([{'a': {'b': 1, 'c': 'x'}}['a']])",
  },
  {
    title: 'a map with mixed values under format, sized',
    expression: 'false',
    messageExpression: "'%d'.format([{'a': 1, 'b': [2.0]}.size()])",
  },
  // A mixed literal outside any format call stays refused.
  { title: 'a mixed list outside format', expression: "[1, 'a'].size() == 0" },
  { title: 'a nested mixed list outside format', expression: '[[1, 2, [3.0, 4]]][0] == [1]' },
  { title: 'a map with mixed values outside format', expression: "{'a': 1, 'b': [2.0]}.size() == 2" },
  // Null params and field selection on what is not a map.
  {
    title: 'has() on null params',
    expression: 'has(params.metadata) && params.metadata.name == "x"',
    nullParams: true,
  },
  { title: 'a field of null params', expression: 'params.metadata.name == "x"', nullParams: true },
  { title: 'params != null', expression: 'params != null && params.metadata.name == "x"', nullParams: true },
  { title: 'a field of an int', expression: 'dyn(1).x == 1' },
  { title: 'has() on a string', expression: 'has(object.metadata.name.x)' },
  { title: 'a field of a list', expression: 'dyn([1]).x == 1' },
  { title: 'has() on a list', expression: 'has(dyn([1]).x)' },
];

function manifests(c: Case, index: number): KubeObject[] {
  const name = `cel-${index}`;
  const validation: Record<string, string> = { expression: c.expression };
  if (c.messageExpression) validation.messageExpression = c.messageExpression;
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        ...(c.nullParams ? { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } } : {}),
        matchConstraints: {
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
          objectSelector: { matchLabels: { 'cel-case': String(index) } },
        },
        validations: [validation],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: `${name}-binding` },
      spec: { policyName: name, validationActions: ['Deny'] },
    },
  ];
}

function configMap(index: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `case-${index}`, namespace: 'default', labels: { 'cel-case': String(index) } },
    data: { a: 'b' },
  };
}

let cluster: ControlPlane;
beforeAll(async () => {
  cluster = await startControlPlane({ controllerManager: false });
});
afterAll(() => cluster?.stop());

const RESOURCES: Record<string, string> = {
  ValidatingAdmissionPolicy: 'validatingadmissionpolicies',
  ValidatingAdmissionPolicyBinding: 'validatingadmissionpolicybindings',
};

/** Creates the objects on the apiserver: the refusal's message, or undefined once all are created. */
async function create(objects: readonly KubeObject[]): Promise<string | undefined> {
  for (const object of objects) {
    const path = `/apis/admissionregistration.k8s.io/v1/${RESOURCES[String(object.kind)]}`;
    const answer = await cluster.request('POST', path, object);
    if (answer.status !== 201) return answer.json<{ message: string }>().message;
  }
  return undefined;
}

/** The apiserver's denial of the case's ConfigMap, once the policy has been loaded (a dry run). */
async function apiserverDenial(index: number): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answer = await cluster.request('POST', '/api/v1/namespaces/default/configmaps?dryRun=All', configMap(index));
    if (answer.status !== 201) return answer.json<{ message: string }>().message;
    if (Date.now() > deadline) throw new Error(`policy cel-${index} never took effect`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The project's plugin configured with the same objects (the ConfigError when it refuses them). */
function projectConfig(objects: readonly KubeObject[]): PluginConfig | ConfigError {
  try {
    return plugin.configure!({ manifests: objects }, { file: 'e2e AdmissionConfiguration', baseDir: process.cwd() });
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
}

/** The project's denial of the case's ConfigMap. */
async function projectDenial(config: PluginConfig, index: number): Promise<string | undefined> {
  const result = await runPhase(
    plugin,
    'validate',
    {
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      object: configMap(index),
      dryRun: true,
    },
    config,
  );
  return deniedMessage(result);
}

/** The field error after the object's name: `spec.validations[0].expression: Invalid value: ...`. */
const fieldError = (message: string) => message.slice(message.indexOf(' spec.') + 1);

describe('the project evaluates CEL as a v1.36 kube-apiserver does', () => {
  it.each(CASES.map((c, i) => [c.title, c, i] as const))('%s', async (_title, c, index) => {
    const objects = manifests(c, index);
    const refused = await create(objects);
    const config = projectConfig(objects);
    if (refused !== undefined) {
      // Refused when the policy is created: the project refuses it at start, with the same field error.
      expect(refused).toMatch(
        /^ValidatingAdmissionPolicy\.admissionregistration\.k8s\.io "cel-\d+" is invalid: spec\./,
      );
      expect(config).toBeInstanceOf(ConfigError);
      expect(fieldError((config as ConfigError).message)).toBe(fieldError(refused));
      return;
    }
    expect(config).not.toBeInstanceOf(ConfigError);
    const apiserver = await apiserverDenial(index);
    expect(await projectDenial(config as PluginConfig, index)).toBe(apiserver);
  });
});
