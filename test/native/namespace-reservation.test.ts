// NamespaceReservation natively. The plugin is this project's (no upstream table): its cases
// follow OpenShift's projectrequest reservation (openshift, kubernetes, kube and their dashed
// prefixes), answered by the plugin and by its compiled policy on every version from 1.30.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/namespace-reservation/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { ENVIRONMENT_VERSIONS } from '../../lib/cel/cel-env.js';
import type { ReviewInput } from '../support/review.js';
import { runPhase } from '../support/review.js';
import { NAMESPACES, OPENSHIFT_RESERVATION, PROJECT_REQUESTS } from '../support/cases/namespace-reservation.js';
import {
  NativeCluster,
  configured,
  expectSameDecisionAndReason,
  expectSameValidationOf,
  nativeObjectsOf,
} from './support/proof.js';

/** A Namespace as the apiserver admits it: its name label is set before admission. */
function namespace(name: string, generateName?: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: generateName ? { generateName } : { name, labels: { 'kubernetes.io/metadata.name': name } },
  };
}

const namespaceCases: { name: string; input: ReviewInput; refused: boolean }[] = [
  { name: 'a reserved name', refused: true, input: { ...NAMESPACES, object: namespace('kube') } },
  { name: 'a reserved prefix', refused: true, input: { ...NAMESPACES, object: namespace('kube-x') } },
  { name: 'another reserved prefix', refused: true, input: { ...NAMESPACES, object: namespace('openshift-infra') } },
  { name: 'kubernetes', refused: true, input: { ...NAMESPACES, object: namespace('kubernetes') } },
  { name: 'a free name', refused: false, input: { ...NAMESPACES, object: namespace('team-a') } },
  {
    name: 'a name that only starts with a reserved name',
    refused: false,
    input: { ...NAMESPACES, object: namespace('kubex') },
  },
  { name: 'a reserved generateName prefix', refused: true, input: { ...NAMESPACES, object: namespace('', 'kube-') } },
  { name: 'a free generateName', refused: false, input: { ...NAMESPACES, object: namespace('', 'team-') } },
  {
    name: 'an update (creates only)',
    refused: false,
    input: { ...NAMESPACES, operation: 'UPDATE', object: namespace('kube-x'), oldObject: namespace('kube-x') },
  },
  {
    name: 'a subresource',
    refused: false,
    input: { ...NAMESPACES, subResource: 'finalize', object: namespace('kube-x') },
  },
];

const project = (name: string): KubeObject => ({
  apiVersion: 'project.openshift.io/v1',
  kind: 'ProjectRequest',
  metadata: { name },
});
const projectCases = [
  { name: 'a reserved project name', refused: true, input: { ...PROJECT_REQUESTS, object: project('openshift') } },
  { name: 'a reserved project prefix', refused: true, input: { ...PROJECT_REQUESTS, object: project('kube-x') } },
  { name: 'a free project name', refused: false, input: { ...PROJECT_REQUESTS, object: project('team-a') } },
];

const CONFIGURATIONS = [
  { name: "OpenShift's names and prefixes", raw: OPENSHIFT_RESERVATION },
  { name: 'names only', raw: { reservedNames: OPENSHIFT_RESERVATION.reservedNames } },
  { name: 'prefixes only', raw: { reservedPrefixes: OPENSHIFT_RESERVATION.reservedPrefixes } },
];

describe.each(ENVIRONMENT_VERSIONS)('on Kubernetes %s', (version) => {
  describe.each(CONFIGURATIONS)('$name', ({ raw }) => {
    const entry = configured(plugin, raw);
    const cluster = new NativeCluster(nativeObjectsOf(entry, version), version);

    it.each(namespaceCases)('$name', async ({ input }) => {
      await expectSameValidationOf(plugin, entry.config, cluster, input);
    });

    it.each(projectCases)(
      '$name (the resource is named as the apiserver names it: a listed difference)',
      async ({ input }) => {
        const webhook = await runPhase(plugin, 'validate', input, entry.config);
        const native = await cluster.validate(input);
        expectSameDecisionAndReason(webhook, native, plugin.metadata.name);
      },
    );
  });

  it('refuses what OpenShift refuses, with its words', async () => {
    const entry = configured(plugin, OPENSHIFT_RESERVATION);
    const cluster = new NativeCluster(nativeObjectsOf(entry, version), version);
    for (const { input, refused } of [...namespaceCases, ...projectCases]) {
      const webhook = await runPhase(plugin, 'validate', input, entry.config);
      expect(webhook.wire.response?.allowed, input.object?.metadata?.name).toBe(!refused);
    }
    const native = await cluster.validate({ ...NAMESPACES, object: namespace('kube') });
    expect(native.wire.response?.status?.message).toBe(
      `namespaces "kube" is forbidden: ValidatingAdmissionPolicy 'serverless-admission-namespace-reservation' with binding 'serverless-admission-namespace-reservation' denied request: cannot create a namespace with the name "kube"`,
    );
  });

  it('leaves kube-system creatable, excluded as the webhook excludes it', async () => {
    const cluster = new NativeCluster(nativeObjectsOf(configured(plugin, OPENSHIFT_RESERVATION), version), version);
    const native = await cluster.validate({ ...NAMESPACES, object: namespace('kube-system') });
    expect(native.wire.response?.allowed).toBe(true);
  });
});
