// The emitted configuration reflects each plugin's enforcement and exemptions: a plugin in Warn or
// Audit can never refuse, even when its Lambda is down (failurePolicy Ignore on every webhook);
// label exemptions become the webhook's selectors, names, users and groups a CEL matchCondition,
// evaluated here with a real CEL implementation.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '@bufbuild/cel';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { plugins as registry } from '../../functions/index.js';
import { emitCommand } from '../../infra/emit/cli.js';
import { ruleViolations, validateSchema } from '../../infra/emit/checks.js';
import type { EmitOptions, WebhookConfiguration } from '../../infra/emit/webhooks.js';
import { EXEMPTIONS_CONDITION, webhookConfigurations } from '../../infra/emit/webhooks.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import type { Enforcement, Exemptions } from '../../lib/config/enforcement.js';
import { NO_EXEMPTIONS } from '../../lib/config/enforcement.js';

const dir = mkdtempSync(join(tmpdir(), 'emit-enforcement-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const byName = (name: string): AnyAdmissionPlugin => registry.find((p) => p.metadata.upstreamName === name)!;
const SYSTEM = { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'kube-node-lease'] };

function emitted(
  plugin: AnyAdmissionPlugin,
  enforcement: Enforcement,
  exemptions: Partial<Exemptions> = {},
  extra: Partial<EmitOptions> = {},
): WebhookConfiguration[] {
  const docs = webhookConfigurations([plugin], {
    baseUrl: 'https://admission.example.com',
    auth: { mode: 'mtls' },
    enforcement: new Map([[plugin.metadata.name, { enforcement, exemptions: { ...NO_EXEMPTIONS, ...exemptions } }]]),
    ...extra,
  });
  for (const doc of docs) validateSchema(doc);
  expect(ruleViolations(docs, [plugin.metadata.name])).toEqual([]);
  return docs;
}

const webhooks = (docs: WebhookConfiguration[]) => docs.flatMap((d) => d.webhooks ?? []);

describe('enforcement: a plugin that cannot refuse fails open', () => {
  it.each(['ResourceQuota', 'AlwaysPullImages', 'NodeRestriction', 'PodNodeSelector'])(
    '%s: Deny keeps its failurePolicy; Warn and Audit are Ignore on every webhook, learning ones included',
    (name) => {
      const plugin = byName(name);
      const deny = webhooks(emitted(plugin, 'Deny'));
      expect(deny.some((w) => w.failurePolicy === 'Fail')).toBe(true);
      for (const mode of ['Warn', 'Audit'] as const) {
        const soft = webhooks(emitted(plugin, mode));
        expect(soft.map((w) => w.name)).toEqual(deny.map((w) => w.name));
        expect(soft.map((w) => w.failurePolicy)).toEqual(soft.map(() => 'Ignore'));
      }
    },
  );
});

describe('label exemptions compile into the judging webhook selectors', () => {
  it('namespaceSelector and objectSelector are negated and ANDed with the system-namespace exclusion', () => {
    const [mutating, validating] = emitted(byName('AlwaysPullImages'), 'Deny', {
      namespaceSelector: { matchLabels: { 'admission.example.com/exempt': 'true' } },
      objectSelector: { matchExpressions: [{ key: 'skip-admission', operator: 'Exists' }] },
    });
    for (const webhook of [...mutating.webhooks!, ...validating.webhooks!]) {
      expect(webhook.namespaceSelector).toEqual({
        matchExpressions: [SYSTEM, { key: 'admission.example.com/exempt', operator: 'NotIn', values: ['true'] }],
      });
      expect(webhook.objectSelector).toEqual({
        matchExpressions: [{ key: 'skip-admission', operator: 'DoesNotExist' }],
      });
    }
  });

  it.each([
    [
      { key: 'a', operator: 'In', values: ['x', 'y'] },
      { key: 'a', operator: 'NotIn', values: ['x', 'y'] },
    ],
    [
      { key: 'a', operator: 'NotIn', values: ['x'] },
      { key: 'a', operator: 'In', values: ['x'] },
    ],
    [
      { key: 'a', operator: 'DoesNotExist' },
      { key: 'a', operator: 'Exists' },
    ],
  ] as const)('%o is emitted as %o', (requirement, negated) => {
    const [validating] = emitted(byName('DenyServiceExternalIPs'), 'Deny', {
      objectSelector: { matchExpressions: [requirement] },
    });
    expect(validating.webhooks![0].objectSelector).toEqual({ matchExpressions: [negated] });
  });

  it('a staged rollout keeps its one namespace and adds the exemption', () => {
    const [, validating] = emitted(
      byName('AlwaysPullImages'),
      'Deny',
      { namespaceSelector: { matchLabels: { legacy: 'yes' } } },
      { stagedNamespace: 'canary' },
    );
    expect(validating.webhooks![0].namespaceSelector).toEqual({
      matchExpressions: [
        { key: 'kubernetes.io/metadata.name', operator: 'In', values: ['canary'] },
        { key: 'legacy', operator: 'NotIn', values: ['yes'] },
      ],
    });
  });

  it('an objectSelector of several requirements is left to the handler (a selector cannot negate a conjunction)', () => {
    const [validating] = emitted(byName('DenyServiceExternalIPs'), 'Deny', {
      objectSelector: { matchLabels: { a: 'x', b: 'y' } },
    });
    expect(validating.webhooks![0].objectSelector).toEqual({});
  });

  it('the learning webhook keeps every object and takes every learned rule: learning is not judging', () => {
    const plugin = byName('NamespaceLifecycle');
    const plain = webhooks(emitted(plugin, 'Deny'));
    const exempting = webhooks(emitted(plugin, 'Deny', { objectSelector: { matchLabels: { skip: 'yes' } } }));
    const learn = exempting.find((w) => w.name.includes('.learn.'))!;
    expect(learn).toBeDefined();
    expect(learn.objectSelector).toEqual({});
    expect(learn.failurePolicy).toBe('Ignore');
    expect(learn.rules!.some((r) => r.resources!.includes('namespaces'))).toBe(true);
    const judge = exempting.find((w) => !w.name.includes('.learn.'))!;
    expect(judge.objectSelector).toEqual({ matchExpressions: [{ key: 'skip', operator: 'NotIn', values: ['yes'] }] });
    expect(judge.rules).toEqual(plain.find((w) => !w.name.includes('.learn.'))!.rules);
  });
});

describe('namespace, user and group exemptions compile into a matchCondition', () => {
  const exemptions = {
    namespaces: ['legacy-apps'],
    usernames: ['system:serviceaccount:ci:deployer'],
    groups: ['platform-admins'],
  };
  const request = (over: Record<string, unknown>) => ({
    namespace: 'apps',
    name: 'web',
    resource: { group: '', version: 'v1', resource: 'pods' },
    userInfo: { username: 'alice', groups: ['system:authenticated'] },
    ...over,
  });

  it.each([
    ['a request in an exempt namespace', request({ namespace: 'legacy-apps' }), false],
    [
      'the exempt Namespace itself',
      request({ namespace: '', name: 'legacy-apps', resource: { group: '', version: 'v1', resource: 'namespaces' } }),
      false,
    ],
    ['an exempt user', request({ userInfo: { username: 'system:serviceaccount:ci:deployer', groups: [] } }), false],
    [
      'a member of an exempt group',
      request({ userInfo: { username: 'bob', groups: ['dev', 'platform-admins'] } }),
      false,
    ],
    ['anyone else, anywhere else', request({}), true],
  ])('%s: the webhook is called = %s', (_, req, called) => {
    for (const webhook of webhooks(emitted(byName('AlwaysPullImages'), 'Warn', exemptions))) {
      const condition = webhook.matchConditions!.find((c) => c.name === EXEMPTIONS_CONDITION)!;
      expect(run(condition.expression, { request: req, object: {}, oldObject: null })).toBe(called);
    }
  });

  it('--no-match-conditions leaves them to the handler', () => {
    const docs = emitted(byName('AlwaysPullImages'), 'Deny', exemptions, { matchConditions: false });
    for (const webhook of webhooks(docs)) expect(webhook.matchConditions).toBeUndefined();
  });
});

describe('npm run emit with an AdmissionConfiguration that sets them', () => {
  async function emit(argv: string[], entry: Record<string, unknown>) {
    const file = join(dir, `admission-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'apiserver.config.k8s.io/v1',
        kind: 'AdmissionConfiguration',
        plugins: [{ name: 'AlwaysPullImages', ...entry }],
      }),
    );
    let stdout = '';
    let stderr = '';
    const code = await emitCommand(
      ['--base-url', 'https://admission.example.com', '--plugins', 'always-pull-images', ...argv],
      {
        stdout: (t) => {
          stdout += t;
        },
        stderr: (t) => {
          stderr += t;
        },
        env: { ADMISSION_CONFIG: file },
      },
    );
    return { code, stderr, docs: parseAllDocuments(stdout).map((d) => d.toJS() as WebhookConfiguration) };
  }

  it("the issue's example: every webhook Ignore, selectors and the matchCondition in place", async () => {
    const { code, stderr, docs } = await emit([], {
      enforcement: 'Warn',
      exemptions: {
        namespaces: ['legacy-apps'],
        usernames: ['system:serviceaccount:ci:deployer'],
        groups: ['platform-admins'],
        namespaceSelector: { matchLabels: { 'admission.example.com/exempt': 'true' } },
        objectSelector: { matchExpressions: [{ key: 'skip-admission', operator: 'Exists' }] },
      },
      configuration: {},
    });
    expect(code, stderr).toBe(0);
    const all = webhooks(docs);
    expect(all).toHaveLength(2);
    for (const webhook of all) {
      expect(webhook.failurePolicy).toBe('Ignore');
      expect(webhook.namespaceSelector!.matchExpressions).toContainEqual({
        key: 'admission.example.com/exempt',
        operator: 'NotIn',
        values: ['true'],
      });
      expect(webhook.objectSelector).toEqual({
        matchExpressions: [{ key: 'skip-admission', operator: 'DoesNotExist' }],
      });
      expect(webhook.matchConditions!.map((c) => c.name)).toContain(EXEMPTIONS_CONDITION);
    }
  });

  it('says which exemptions only the handler applies', async () => {
    const { code, stderr } = await emit(['--no-match-conditions'], {
      exemptions: { usernames: ['ci'], objectSelector: { matchLabels: { a: 'x', b: 'y' } } },
    });
    expect(code, stderr).toBe(0);
    expect(stderr).toContain(
      'AlwaysPullImages: exemptions.objectSelector has several requirements: checked in the handler only',
    );
    expect(stderr).toContain(
      'AlwaysPullImages: exemptions.usernames: checked in the handler only (--no-match-conditions)',
    );
  });

  it('refuses a namespaceSelector exemption of several requirements for a plugin that does not learn namespaces', async () => {
    const { code, stderr } = await emit([], {
      exemptions: { namespaceSelector: { matchLabels: { a: 'x', b: 'y' } } },
    });
    expect(code).not.toBe(0);
    expect(stderr).toContain(
      'AlwaysPullImages: plugins[0].exemptions.namespaceSelector: must have exactly one requirement',
    );
  });
});
