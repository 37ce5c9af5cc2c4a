// What a native plugin's binding and conditions carry from its AdmissionConfiguration entry, as the
// webhook's configuration and handler carry it: the exemptions (namespaces, users, groups, label
// selectors of one requirement or several) and the enforcement (Deny, Warn, Audit). The webhook's
// answer is modelled as its handler gives it (isExempt, then enforced); the policies' as the
// engine gives it.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/deny-service-external-ips/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import type { Enforcement, Exemptions } from '../../lib/config/enforcement.js';
import { NO_EXEMPTIONS } from '../../lib/config/enforcement.js';
import { enforced, isExempt } from '../../lib/http/enforcement.js';
import { planPlugin } from '../../infra/native/plan.js';
import type { NamespaceFixture } from './support/proof.js';
import { NativeCluster, configured, namespaceState, nativeObjectsOf } from './support/proof.js';
import type { ReviewInput } from '../support/review.js';
import { requestOf } from '../support/review.js';

const service = (namespace: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'test-svc', namespace, labels },
  spec: { externalIPs: ['1.1.1.1'] },
});
const NAMESPACES: NamespaceFixture[] = [
  { name: 'apps' },
  { name: 'exempt-ns' },
  { name: 'infra', labels: { tier: 'infra' } },
  { name: 'infra-prod', labels: { tier: 'infra', env: 'prod' } },
  { name: 'kube-system' },
];
const state = namespaceState(NAMESPACES);
const input = (namespace: string, extra: Partial<ReviewInput> = {}): ReviewInput => ({
  kind: { kind: 'Service' },
  resource: { resource: 'services' },
  object: service(namespace),
  userInfo: { username: 'dev', groups: ['system:authenticated'] },
  ...extra,
});

/** The webhook's answer: exempt requests admitted unchanged, the rest enforced. */
async function webhookAllows(request: ReviewInput, exemptions: Exemptions): Promise<boolean> {
  const decoded = requestOf(request);
  if (decoded.namespace === 'kube-system') return true; // its namespaceSelector
  if (await isExempt(decoded, exemptions, state.learnedNamespaces)) return true;
  return (await plugin.validate?.(decoded, { config: undefined, state }))?.kind !== 'denied';
}

const with_ = (exemptions: Partial<Exemptions>): Exemptions => ({ ...NO_EXEMPTIONS, ...exemptions });
const CASES: { name: string; exemptions: Exemptions; request: ReviewInput; exempt: boolean }[] = [
  { name: 'no exemptions', exemptions: NO_EXEMPTIONS, request: input('apps'), exempt: false },
  { name: 'kube-system is excluded', exemptions: NO_EXEMPTIONS, request: input('kube-system'), exempt: true },
  {
    name: 'an exempt namespace',
    exemptions: with_({ namespaces: ['exempt-ns'] }),
    request: input('exempt-ns'),
    exempt: true,
  },
  {
    name: 'another namespace',
    exemptions: with_({ namespaces: ['exempt-ns'] }),
    request: input('apps'),
    exempt: false,
  },
  {
    name: 'an exempt user',
    exemptions: with_({ usernames: ['ci-bot'] }),
    request: input('apps', { userInfo: { username: 'ci-bot' } }),
    exempt: true,
  },
  {
    name: 'an exempt group',
    exemptions: with_({ groups: ['system:masters'] }),
    request: input('apps', { userInfo: { username: 'admin', groups: ['system:masters'] } }),
    exempt: true,
  },
  {
    name: 'a namespace selector of one requirement',
    exemptions: with_({ namespaceSelector: { matchLabels: { tier: 'infra' } } }),
    request: input('infra'),
    exempt: true,
  },
  {
    name: 'a namespace selector of several requirements, matched',
    exemptions: with_({ namespaceSelector: { matchLabels: { tier: 'infra', env: 'prod' } } }),
    request: input('infra-prod'),
    exempt: true,
  },
  {
    name: 'a namespace selector of several requirements, half matched',
    exemptions: with_({ namespaceSelector: { matchLabels: { tier: 'infra', env: 'prod' } } }),
    request: input('infra'),
    exempt: false,
  },
  {
    name: 'an object selector of one requirement',
    exemptions: with_({ objectSelector: { matchLabels: { exempt: 'true' } } }),
    request: input('apps', { object: service('apps', { exempt: 'true' }) }),
    exempt: true,
  },
  {
    name: 'an object selector of several requirements',
    exemptions: with_({
      objectSelector: {
        matchExpressions: [
          { key: 'a', operator: 'Exists' },
          { key: 'b', operator: 'DoesNotExist' },
        ],
      },
    }),
    request: input('apps', { object: service('apps', { a: 'x' }) }),
    exempt: true,
  },
  {
    name: 'an update that removes the exempting label is judged',
    exemptions: with_({ objectSelector: { matchLabels: { exempt: 'true' } } }),
    request: input('apps', {
      operation: 'UPDATE',
      object: service('apps'),
      oldObject: { ...service('apps', { exempt: 'true' }), spec: {} },
    }),
    exempt: false,
  },
];

describe('exemptions', () => {
  it.each(CASES)('$name', async ({ exemptions, request, exempt }) => {
    const cluster = new NativeCluster(nativeObjectsOf(configured(plugin, undefined, { exemptions }), '1.30'), '1.30');
    const native = await cluster.validate(request, state);
    expect(native.wire.response?.allowed).toBe(exempt);
    expect(await webhookAllows(request, exemptions)).toBe(exempt);
  });
});

describe('enforcement', () => {
  const clusterFor = (enforcement: Enforcement) =>
    new NativeCluster(nativeObjectsOf(configured(plugin, undefined, { enforcement }), '1.30'), '1.30');
  const NAME = 'serverless-admission-deny-service-external-ips';

  it('Deny refuses', async () => {
    expect((await clusterFor('Deny').validate(input('apps'), state)).wire.response?.allowed).toBe(false);
  });

  it("Warn admits with the refusal as a warning (the apiserver's wording around the message)", async () => {
    const native = await clusterFor('Warn').validate(input('apps'), state);
    expect(native.wire.response?.allowed).toBe(true);
    expect(native.wire.response?.warnings).toEqual([
      `Validation failed for ValidatingAdmissionPolicy '${NAME}' with binding '${NAME}': Use of external IPs is denied by admission control`,
    ]);
    const webhook = enforced(await plugin.validate!(requestOf(input('apps')), { config: undefined, state }), 'Warn');
    expect(webhook).toMatchObject({
      kind: 'allowed',
      warnings: [expect.stringContaining('Use of external IPs is denied by admission control')],
    });
  });

  it('Audit admits and records the refusal in an audit annotation', async () => {
    const native = await clusterFor('Audit').validate(input('apps'), state);
    expect(native.wire.response?.allowed).toBe(true);
    expect(native.wire.response?.warnings).toBeUndefined();
    expect(JSON.parse(native.wire.response?.auditAnnotations?.validation_failure ?? '[]')).toEqual([
      expect.objectContaining({
        message: 'Use of external IPs is denied by admission control',
        policy: NAME,
        validationActions: ['Audit'],
      }),
    ]);
  });

  it('a staged rollout judges only its namespace, and fails open', async () => {
    const objects = planPlugin(configured(plugin), '1.30', { stagedNamespace: 'apps' }).objects ?? [];
    expect(objects.find((o) => o.kind === 'ValidatingAdmissionPolicy')?.spec.failurePolicy).toBe('Ignore');
    const staged = new NativeCluster(objects, '1.30');
    expect((await staged.validate(input('apps'), state)).wire.response?.allowed).toBe(false);
    expect((await staged.validate(input('exempt-ns'), state)).wire.response?.allowed).toBe(true);
  });
});
