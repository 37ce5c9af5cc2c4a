// `npm run emit`, run in-process: its documents must pass the admissionregistration.k8s.io/v1
// OpenAPI schema (kubernetes-models' validating classes) and the good-practice rules, for every
// plugin in the registry and for synthetic plugins that exercise each metadata branch.
import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '@bufbuild/cel';
import {
  MutatingWebhookConfiguration,
  ValidatingWebhookConfiguration,
} from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml, stringify } from 'yaml';
import { plugins as registry } from '../../functions/index.js';
import runOnceDuration, { RUN_ONCE_PODS } from '../../functions/run-once-duration/plugin.js';
import type { AnyAdmissionPlugin, PluginMetadata, WebhookRule } from '../../lib/admission/plugin.js';
import { definePlugin } from '../../lib/admission/plugin.js';
import { allowed } from '../../lib/admission/decision.js';
import { emitCommand } from '../../infra/emit/cli.js';
import { ruleCovers } from '../../infra/emit/webhooks.js';
import { CapabilityVerifier, deploymentOfBaseUrl, publicKeyText } from '../../lib/http/capability.js';
import type { Endpoint } from '../../lib/http/webhook-path.js';
import { ENDPOINTS } from '../../lib/http/webhook-path.js';
import { learningEndpointRules, learningRules } from '../../lib/admission/learning.js';
import { kubeconfigUserName } from '../../infra/emit/apiserver.js';
import type { CapturedRun } from '../support/captured.js';
import { captured } from '../support/captured.js';
import { everyPluginActiveConfiguration } from '../support/every-plugin-active.js';
import { configurePlugin, loadAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import { testPki } from '../support/pki.js';

/** An AdmissionConfiguration under which every registered plugin is active (written in beforeAll). */
let everyPluginActive: string;
let removeEverything = () => {};
/** One that names no plugin: the default-on set, which synthetic plugins without `optIn` are in. */
let namesNone: string;

const emit = (
  argv: string[],
  plugins?: readonly AnyAdmissionPlugin[],
  env: NodeJS.ProcessEnv = { ADMISSION_CONFIG: plugins === undefined ? everyPluginActive : namesNone },
): Promise<CapturedRun> => captured((output) => emitCommand(argv, { ...output, env, plugins }));

type Doc = Record<string, any>;
const documents = (yaml: string): Doc[] => parseAllDocuments(yaml).map((d) => d.toJS() as Doc);

const PROTECTED = [
  ['coordination.k8s.io', 'leases', 'Namespaced'],
  ['authentication.k8s.io', 'tokenreviews', 'Cluster'],
  ['authorization.k8s.io', 'subjectaccessreviews', 'Cluster'],
];

/** The checks the issue lists, written independently of the emitter's own. */
function expectGoodPractice(docs: Doc[], plugins: readonly AnyAdmissionPlugin[]): void {
  const names = plugins.map((p) => p.metadata.name);
  const seen = new Set<string>();
  for (const doc of docs) {
    // The schema, by the library: throws a ValidationError naming the field.
    if (doc.kind === 'MutatingWebhookConfiguration') new MutatingWebhookConfiguration(doc as never).validate();
    else if (doc.kind === 'ValidatingWebhookConfiguration') new ValidatingWebhookConfiguration(doc as never).validate();
    else throw new Error(`unexpected kind ${doc.kind}`);
    expect(doc.apiVersion).toBe('admissionregistration.k8s.io/v1');
    for (const webhook of doc.webhooks) {
      const key = `${doc.kind}/${webhook.name}`;
      expect(seen.has(key), `${key} unique`).toBe(false);
      seen.add(key);
      expect(
        names.some((n) => webhook.name.startsWith(`${n}.`)),
        `${webhook.name} begins with a plugin name`,
      ).toBe(true);
      expect(webhook.name).toMatch(/^[a-z0-9-]+(\.[a-z0-9-]+){2,}$/);
      const url = new URL(webhook.clientConfig.url);
      expect(url.protocol).toBe('https:');
      expect(webhook.clientConfig.url).not.toMatch(/[?#]/);
      expect(webhook.clientConfig.service).toBeUndefined();
      expect(
        Number.isInteger(webhook.timeoutSeconds) && webhook.timeoutSeconds >= 1 && webhook.timeoutSeconds <= 10,
      ).toBe(true);
      expect(['None', 'NoneOnDryRun']).toContain(webhook.sideEffects);
      expect(webhook.admissionReviewVersions).toEqual(['v1', 'v1beta1']);
      expect(webhook.matchPolicy).toBe('Equivalent');
      for (const [group, resource, scope] of PROTECTED) {
        const reached = webhook.rules.some(
          (rule: Doc) =>
            (rule.apiGroups.includes('*') || rule.apiGroups.includes(group)) &&
            rule.resources.some((r: string) => r.split('/')[0] === '*' || r.split('/')[0] === resource) &&
            [undefined, '*', scope].includes(rule.scope),
        );
        // Reached by a wildcard rule: some matchCondition (CEL, evaluated here) must turn it away.
        const request = {
          resource: { group, version: 'v1', resource },
          subResource: '',
          operation: 'CREATE',
          namespace: 'kube-system',
          name: 'x',
          userInfo: { username: 'system:kube-controller-manager', groups: [] },
        };
        const skipped = (webhook.matchConditions ?? []).some(
          (c: Doc) => run(c.expression, { request, object: {}, oldObject: null }) === false,
        );
        expect(!reached || skipped, `${webhook.name} must never be called for ${group}/${resource}`).toBe(true);
      }
    }
  }
  const webhookNames = (kind: string) =>
    docs.filter((d) => d.kind === kind).flatMap((d) => d.webhooks.map((w: Doc) => w.name as string));
  for (const { metadata } of plugins) {
    if (metadata.mutating)
      expect(
        webhookNames('MutatingWebhookConfiguration').some((n) => n.startsWith(`${metadata.name}.`)),
        `${metadata.name} mutating`,
      ).toBe(true);
    if (metadata.validating)
      expect(
        webhookNames('ValidatingWebhookConfiguration').some((n) => n.startsWith(`${metadata.name}.`)),
        `${metadata.name} validating`,
      ).toBe(true);
  }
}

const podRule: WebhookRule = {
  operations: ['CREATE', 'UPDATE'],
  apiGroups: [''],
  apiVersions: ['v1'],
  resources: ['pods'],
  scope: 'Namespaced',
};

function fakePlugin(
  name: string,
  overrides: Partial<PluginMetadata>,
  extra: Partial<AnyAdmissionPlugin> = {},
): AnyAdmissionPlugin {
  return definePlugin({
    metadata: {
      upstreamName: name,
      name: name.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase(),
      summary: `${name} for tests.`,
      validating: { rules: [podRule], failurePolicy: 'Fail', timeoutSeconds: 3 },
      writes: false,
      needs: [],
      systemNamespaces: 'exclude',
      ...overrides,
    },
    validate: () => allowed(),
    ...extra,
  });
}

const stateful = fakePlugin('ResourceCounter', {
  mutating: {
    rules: [podRule],
    failurePolicy: 'Ignore',
    timeoutSeconds: 4,
    reinvocationPolicy: 'Never',
    matchConditions: [{ name: 'not-a-node', expression: "!request.userInfo.username.startsWith('system:node:')" }],
  },
  writes: true,
  needs: ['namespaces', 'resourcequotas'],
  systemNamespaces: 'include',
});
const configDriven = fakePlugin(
  'PolicyEvaluator',
  {},
  {
    configure: (raw: unknown) => raw,
    validatingRulesFor: (config: { resources?: string[] } | undefined) => [
      {
        operations: ['CREATE'],
        apiGroups: ['apps'],
        apiVersions: ['v1'],
        resources: config?.resources ?? ['deployments'],
      },
    ],
  },
);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'emit-'));
  const everything = everyPluginActiveConfiguration();
  everyPluginActive = everything.file;
  removeEverything = everything.remove;
  namesNone = join(dir, 'names-none.yaml');
  writeFileSync(namesNone, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins: []\n');
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  removeEverything();
});

/**
 * The webhooks of one configuration, in order: the plugin's judge, then (failurePolicyGroups) the
 * judge of its Ignore group, then (a validating configuration) its learning webhook. A plugin that
 * only mutates but learns has a validating configuration holding the learning webhook alone.
 */
function judgeAndLearn(doc: Doc): { judge?: Doc; learn?: Doc; ignoreGroup?: Doc } {
  const webhooks: Doc[] = [...doc.webhooks];
  const learn = webhooks.at(-1)?.name.match(/\.learn\.serverless-admission\.io$/) ? webhooks.pop() : undefined;
  const [judge, ignoreGroup, ...rest] = webhooks;
  expect(rest).toEqual([]);
  if (judge) expect(judge.name).toMatch(/\.(mutate|validate)\.serverless-admission\.io$/);
  if (ignoreGroup) expect(ignoreGroup.name).toMatch(/\.(mutate|validate)-ignore\.serverless-admission\.io$/);
  if (learn) expect(doc.kind).toBe('ValidatingWebhookConfiguration');
  return { judge, learn, ignoreGroup };
}

/** A rule as emitted: the scope always written. */
const emitted = (rules: readonly WebhookRule[]) => rules.map((r) => ({ ...r, scope: r.scope ?? '*' }));

describe('every registered plugin, mTLS', () => {
  it('passes the schema and the good-practice rules: per plugin, its judges and one learning webhook', async () => {
    const run = await emit(['--base-url', 'https://admission.example.com']);
    expect(run.code, run.stderr).toBe(0);
    const docs = documents(run.stdout);
    expectGoodPractice(docs, registry);
    const configuration = loadAdmissionConfiguration({ ADMISSION_CONFIG: everyPluginActive });
    for (const plugin of registry) {
      const { metadata } = plugin;
      const mine = docs.filter((d) => d.metadata.name === `serverless-admission-${metadata.name}`);
      // A phase that follows the configuration (MutatingAdmissionPolicy's policies) is checked as configured.
      const mutating =
        plugin.mutatingPhaseFor && metadata.mutating
          ? { ...metadata.mutating, ...plugin.mutatingPhaseFor(configurePlugin(plugin, configuration)) }
          : metadata.mutating;
      const learned = learningEndpointRules(metadata);
      expect(mine.map((d) => d.kind)).toEqual([
        ...(metadata.mutating ? ['MutatingWebhookConfiguration'] : []),
        ...(metadata.validating || learned.length > 0 ? ['ValidatingWebhookConfiguration'] : []),
      ]);
      const learnings: Doc[] = [];
      for (const doc of mine) {
        const { judge, learn, ignoreGroup } = judgeAndLearn(doc);
        const phase = doc.kind === 'MutatingWebhookConfiguration' ? 'mutate' : 'validate';
        const meta = phase === 'mutate' ? mutating : metadata.validating;
        if (learn) learnings.push(learn);
        if (!meta) {
          // A plugin that only mutates: its validating configuration is its learning webhook.
          expect(judge).toBeUndefined();
          continue;
        }
        expect(judge!.name).toBe(`${metadata.name}.${phase}.serverless-admission.io`);
        expect(judge!.clientConfig.url).toBe(`https://admission.example.com/${metadata.name}/${phase}`);
        expect(judge!.timeoutSeconds).toBe(meta.timeoutSeconds);
        expect(judge!.failurePolicy).toBe(meta.failurePolicy);
        // A judge is sent what the plugin judges, and nothing it only learns from: its rules are
        // the phase's own (split by failurePolicy where the phase asks).
        const groups = meta.failurePolicyGroups;
        const judgedRules = groups
          ? groups[0].rules
          : phase === 'validate' && plugin.validatingRulesFor
            ? undefined
            : meta.rules;
        if (judgedRules) expect(judge!.rules).toEqual(emitted(judgedRules));
        if (groups) {
          expect(ignoreGroup).toMatchObject({
            name: `${metadata.name}.${phase}-ignore.serverless-admission.io`,
            failurePolicy: 'Ignore',
            clientConfig: judge!.clientConfig,
            rules: emitted(groups[1].rules),
            ...(phase === 'mutate' && { reinvocationPolicy: judge!.reinvocationPolicy }),
          });
        } else expect(ignoreGroup).toBeUndefined();
        if (phase === 'mutate') expect(judge!.reinvocationPolicy).toBe(mutating!.reinvocationPolicy ?? 'Never');
        else expect(judge!.reinvocationPolicy).toBeUndefined();
        // NoneOnDryRun where the judge records side effects of its own; learning is not its job.
        for (const j of [judge, ignoreGroup].filter(Boolean))
          expect(j!.sideEffects).toBe(metadata.writes ? 'NoneOnDryRun' : 'None');
      }
      // One learning webhook per plugin that learns, on its own URL: every rule it learns from and
      // every request its phases only observe; it fails open, answers fast, writes only outside dry runs.
      if (learned.length === 0) {
        expect(learnings).toEqual([]);
        continue;
      }
      expect(learnings).toHaveLength(1);
      const [learn] = learnings;
      expect(learn).toMatchObject({
        name: `${metadata.name}.learn.serverless-admission.io`,
        clientConfig: { url: `https://admission.example.com/${metadata.name}/learn` },
        failurePolicy: 'Ignore',
        sideEffects: 'NoneOnDryRun',
        timeoutSeconds: 2,
        matchPolicy: 'Equivalent',
        objectSelector: {},
      });
      expect(learn.reinvocationPolicy).toBeUndefined();
      for (const rule of learned)
        expect(
          learn.rules.some((r: WebhookRule) => ruleCovers(r, rule)),
          `${metadata.name} learns ${JSON.stringify(rule)}`,
        ).toBe(true);
      for (const rule of learn.rules as WebhookRule[])
        expect(
          learned.some((r) => ruleCovers(r, rule)),
          `${metadata.name} learns only ${JSON.stringify(rule)}`,
        ).toBe(true);
    }
  });

  it('AlwaysPullImages: mutating Ignore + IfNeeded with a validating Fail twin, system namespaces excluded', async () => {
    const docs = documents(
      (await emit(['--base-url', 'https://admission.example.com', '--plugins', 'always-pull-images'])).stdout,
    );
    expect(docs).toHaveLength(2);
    const [mutating, validating] = docs.map((d) => d.webhooks[0]);
    expect(mutating).toMatchObject({
      failurePolicy: 'Ignore',
      reinvocationPolicy: 'IfNeeded',
      sideEffects: 'None',
      timeoutSeconds: 3,
    });
    expect(validating).toMatchObject({ failurePolicy: 'Fail', sideEffects: 'None' });
    for (const webhook of [mutating, validating]) {
      expect(webhook.rules).toEqual([
        {
          operations: ['CREATE', 'UPDATE'],
          apiGroups: [''],
          apiVersions: ['v1'],
          resources: ['pods'],
          scope: 'Namespaced',
        },
      ]);
      expect(webhook.namespaceSelector).toEqual({
        matchExpressions: [
          { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'kube-node-lease'] },
        ],
      });
      expect(webhook.clientConfig.caBundle).toBeUndefined();
    }
  });

  it('fills caBundle from --ca-bundle, excludes --webhook-namespace, and stages in one namespace with Ignore', async () => {
    const caFile = join(dir, 'ca.crt');
    writeFileSync(caFile, testPki().ca.certPem);
    const run = await emit([
      '--base-url',
      'https://127.0.0.1:8443/',
      '--ca-bundle',
      caFile,
      '--webhook-namespace',
      'admission',
    ]);
    for (const doc of documents(run.stdout)) {
      const plugin = registry.find((p) => `serverless-admission-${p.metadata.name}` === doc.metadata.name)!;
      for (const webhook of doc.webhooks) {
        expect(Buffer.from(webhook.clientConfig.caBundle, 'base64').toString('utf8')).toBe(
          readFileSync(caFile, 'utf8'),
        );
        expect(webhook.clientConfig.url).toMatch(/^https:\/\/127\.0\.0\.1:8443\/[a-z-]+\/(mutate|validate|learn)$/);
        if (plugin.metadata.systemNamespaces === 'exclude')
          expect(webhook.namespaceSelector.matchExpressions[0].values).toEqual([
            'kube-system',
            'kube-node-lease',
            'admission',
          ]);
        else expect(webhook.namespaceSelector).toEqual({});
      }
    }
    const staged = await emit(['--base-url', 'https://admission.example.com', '--staged', 'admission-canary']);
    const docs = documents(staged.stdout);
    expectGoodPractice(docs, registry);
    for (const doc of docs) {
      expect(doc.metadata.labels['serverless-admission.io/rollout']).toBe('staged');
      for (const webhook of doc.webhooks) {
        expect(webhook.failurePolicy).toBe('Ignore');
        expect(webhook.namespaceSelector).toEqual({
          matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['admission-canary'] }],
        });
      }
    }
  });

  it('the twins that hold a boundary the fail-open merge enforces fail closed; RunOnceDuration sees run-once pods only', async () => {
    const run = await emit(['--base-url', 'https://admission.example.com']);
    expect(run.code, run.stderr).toBe(0);
    const webhooks = documents(run.stdout).flatMap((d) => d.webhooks as Doc[]);
    const named = (name: string) => webhooks.find((w) => w.name === `${name}.serverless-admission.io`)!;
    for (const plugin of ['pod-node-selector', 'origin-pod-node-environment', 'run-once-duration']) {
      expect(named(`${plugin}.mutate`).failurePolicy).toBe('Ignore');
      expect(named(`${plugin}.validate`).failurePolicy).toBe('Fail');
    }
    expect(named('run-once-duration.validate').matchConditions).toEqual([RUN_ONCE_PODS]);
    // Before 1.28 the condition is dropped: the twin is sent every new pod and passes the others.
    const old = await emit(
      ['--base-url', 'https://admission.example.com', '--no-match-conditions'],
      [runOnceDuration],
      { ADMISSION_CONFIG: everyPluginActive },
    );
    expect(old.code, old.stderr).toBe(0);
    const oldTwin = documents(old.stdout)
      .flatMap((d) => d.webhooks as Doc[])
      .find((w) => w.name === 'run-once-duration.validate.serverless-admission.io')!;
    expect(oldTwin.failurePolicy).toBe('Fail');
    expect(oldTwin.matchConditions).toBeUndefined();
  });
});

describe('metadata branches (synthetic plugins)', () => {
  it('learning rules, NoneOnDryRun for writers, matchConditions, included system namespaces', async () => {
    const run = await emit(['--base-url', 'https://admission.example.com'], [stateful]);
    expect(run.code, run.stderr).toBe(0);
    const docs = documents(run.stdout);
    expectGoodPractice(docs, [stateful]);
    const mutating = docs.find((d) => d.kind === 'MutatingWebhookConfiguration')!.webhooks[0];
    const { judge: validating, learn } = judgeAndLearn(docs.find((d) => d.kind === 'ValidatingWebhookConfiguration')!);
    expect(mutating).toMatchObject({
      sideEffects: 'NoneOnDryRun',
      reinvocationPolicy: 'Never',
      timeoutSeconds: 4,
      namespaceSelector: {},
    });
    expect(mutating.matchConditions).toEqual([
      { name: 'not-a-node', expression: "!request.userInfo.username.startsWith('system:node:')" },
    ]);
    expect(mutating.rules).toEqual(emitted([podRule]));
    // The judging webhook fails closed on what it judges, and only that: no learning rule.
    expect(validating).toMatchObject({ sideEffects: 'NoneOnDryRun', failurePolicy: 'Fail' });
    expect(validating!.rules).toEqual(emitted([podRule]));
    // Learning fails open, on a webhook of its own with a URL of its own (its own capability in
    // url-secret mode), so a judge's URL can never reach it.
    expect(learn).toMatchObject({
      name: 'resource-counter.learn.serverless-admission.io',
      failurePolicy: 'Ignore',
      timeoutSeconds: 2,
      sideEffects: 'NoneOnDryRun',
      clientConfig: { url: 'https://admission.example.com/resource-counter/learn' },
      namespaceSelector: {},
    });
    expect(learn!.matchConditions).toBeUndefined();
    expect(learn!.rules).toEqual(emitted(learningRules(stateful.metadata)));
    expect(
      learn!.rules.some(
        (r: Doc) =>
          r.resources.includes('namespaces') && r.scope === 'Cluster' && r.operations.join() === 'CREATE,UPDATE,DELETE',
      ),
    ).toBe(true);
    expect(
      learn!.rules.some(
        (r: Doc) => r.resources.includes('resourcequotas') && r.operations.join() === 'CREATE,UPDATE,DELETE',
      ),
    ).toBe(true);

    // Without a validating phase: the mutating judge, and a validating configuration with the
    // learning webhook alone (it sees the final object, and never mutates).
    const mutatorOnly = fakePlugin('NamespaceMutator', {
      validating: undefined,
      mutating: { rules: [podRule], failurePolicy: 'Ignore', timeoutSeconds: 2 },
      needs: ['namespaces'],
    });
    const onlyDocs = documents((await emit(['--base-url', 'https://admission.example.com'], [mutatorOnly])).stdout);
    expectGoodPractice(onlyDocs, [mutatorOnly]);
    expect(onlyDocs.map((d) => [d.kind, d.webhooks.map((w: Doc) => w.name)])).toEqual([
      ['MutatingWebhookConfiguration', ['namespace-mutator.mutate.serverless-admission.io']],
      ['ValidatingWebhookConfiguration', ['namespace-mutator.learn.serverless-admission.io']],
    ]);
    expect(onlyDocs[0].webhooks[0]).toMatchObject({ rules: emitted([podRule]), sideEffects: 'None' });
    expect(onlyDocs[1].webhooks[0]).toMatchObject({
      rules: emitted(learningRules(mutatorOnly.metadata)),
      failurePolicy: 'Ignore',
      sideEffects: 'NoneOnDryRun',
      clientConfig: { url: 'https://admission.example.com/namespace-mutator/learn' },
    });
    expect(onlyDocs[1].webhooks[0].reinvocationPolicy).toBeUndefined();
    // A write the plugin judges and learns from goes to both: the judge decides, the learning
    // webhook records what the judge admitted (the judge never learns).
    const namespaceJudge = fakePlugin('NamespaceJudge', {
      validating: { rules: learningRules({ needs: ['namespaces'] }), failurePolicy: 'Fail', timeoutSeconds: 3 },
      needs: ['namespaces'],
    });
    const [judgeDoc] = documents(
      (await emit(['--base-url', 'https://admission.example.com'], [namespaceJudge])).stdout,
    );
    expect(judgeDoc.webhooks.map((w: Doc) => [w.name, w.rules, w.failurePolicy, w.sideEffects])).toEqual([
      [
        'namespace-judge.validate.serverless-admission.io',
        emitted(learningRules(namespaceJudge.metadata)),
        'Fail',
        'None',
      ],
      [
        'namespace-judge.learn.serverless-admission.io',
        emitted(learningRules(namespaceJudge.metadata)),
        'Ignore',
        'NoneOnDryRun',
      ],
    ]);
    const old = documents(
      (await emit(['--base-url', 'https://admission.example.com', '--no-match-conditions'], [stateful])).stdout,
    );
    expect(old[0].webhooks[0].matchConditions).toBeUndefined();
  });

  it('requests a phase only observes reach the learning webhook, never the judge', async () => {
    const observing = fakePlugin('UsageRecorder', {
      validating: {
        rules: [podRule],
        observes: [{ ...podRule, operations: ['DELETE'] }],
        failurePolicy: 'Fail',
        timeoutSeconds: 3,
      },
      writes: true,
    });
    const [doc] = documents((await emit(['--base-url', 'https://admission.example.com'], [observing])).stdout);
    expectGoodPractice([doc], [observing]);
    const { judge, learn } = judgeAndLearn(doc);
    expect(judge!.rules).toEqual(emitted([podRule]));
    expect(learn!.rules).toEqual(emitted([{ ...podRule, operations: ['DELETE'] }]));
    expect(learn!.clientConfig.url).toBe('https://admission.example.com/usage-recorder/learn');
  });

  it('a plugin that judges only nodes learns from everyone through a learning webhook that fails open', async () => {
    const nodeRestriction = registry.find((p) => p.metadata.name === 'node-restriction')!;
    const emittedRun = await emit(['--base-url', 'https://admission.example.com'], [nodeRestriction]);
    expect(emittedRun.code, emittedRun.stderr).toBe(0);
    const docs = documents(emittedRun.stdout);
    expectGoodPractice(docs, [nodeRestriction]);
    expect(docs).toHaveLength(1);
    expect(docs[0].webhooks).toHaveLength(2);
    const { judge, learn } = judgeAndLearn(docs[0]);
    expect(judge).toMatchObject({
      name: 'node-restriction.validate.serverless-admission.io',
      failurePolicy: 'Fail',
      sideEffects: 'None',
      clientConfig: { url: 'https://admission.example.com/node-restriction/validate' },
    });
    expect(learn).toMatchObject({
      name: 'node-restriction.learn.serverless-admission.io',
      failurePolicy: 'Ignore',
      sideEffects: 'NoneOnDryRun',
      clientConfig: { url: 'https://admission.example.com/node-restriction/learn' },
      namespaceSelector: {},
    });
    expect(learn!.rules).toEqual(emitted(learningRules(nodeRestriction.metadata)));
    // The judge's condition, evaluated as the apiserver would: nodes' requests are judged; every
    // request the learning rules match is learned from, whoever sent it.
    const calls = (userInfo: Doc) =>
      docs[0].webhooks
        .filter((w: Doc) =>
          (w.matchConditions ?? []).every(
            (c: Doc) => run(c.expression, { request: { userInfo }, object: {}, oldObject: null }) === true,
          ),
        )
        .map((w: Doc) => w.name.split('.')[1]);
    expect(calls({ username: 'system:node:worker-1', groups: ['system:nodes'] })).toEqual(['validate', 'learn']);
    expect(calls({ username: 'system:kube-scheduler', groups: [] })).toEqual(['learn']);
    expect(calls({ groups: [] })).toEqual(['learn']);

    // Staged: both fail open.
    const staged = documents(
      (await emit(['--base-url', 'https://admission.example.com', '--staged', 'canary'], [nodeRestriction])).stdout,
    );
    expect(staged[0].webhooks.map((w: Doc) => w.failurePolicy)).toEqual(['Ignore', 'Ignore']);
    // The operator is told which webhooks need 1.28+, and what to do on an older cluster.
    expect(emittedRun.stderr).toContain(
      'note: 1 webhook uses matchConditions (Kubernetes 1.28+: node-restriction.validate.serverless-admission.io); for an older cluster, emit with --no-match-conditions',
    );
    // Before 1.28 (no matchConditions): the judge is sent everyone's requests, and judges only
    // nodes' (the handler checks the user); learning is unchanged.
    const oldRun = await emit(
      ['--base-url', 'https://admission.example.com', '--no-match-conditions'],
      [nodeRestriction],
    );
    expect(oldRun.stderr).not.toContain('matchConditions (Kubernetes 1.28+');
    const old = documents(oldRun.stdout);
    expect(old[0].webhooks.map((w: Doc) => w.name)).toEqual([judge!.name, learn!.name]);
    expect(old[0].webhooks[0].matchConditions).toBeUndefined();
    expect(old[0].webhooks[0].rules).toEqual(judge!.rules);
    expect(old[0].webhooks[1].rules).toEqual(learn!.rules);
  });

  it('a file that names no plugin emits the default-on set, and names the others in one line', async () => {
    const bare = join(dir, 'bare.yaml');
    writeFileSync(bare, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n');
    const defaults = await emit(['--base-url', 'https://admission.example.com', '--admission-config', bare], registry);
    expect(defaults.code, defaults.stderr).toBe(0);
    const emittedPlugins = new Set(
      documents(defaults.stdout).map((d) => d.metadata.annotations['serverless-admission.io/plugin']),
    );
    expect(emittedPlugins.has('ImagePolicyWebhook')).toBe(false);
    expect(emittedPlugins.has('ValidatingAdmissionPolicy')).toBe(false);
    expect(emittedPlugins.has('AlwaysDeny')).toBe(false);
    const offByDefault = registry.filter(
      (p) => p.metadata.requiresConfiguration || p.metadata.optIn || p.inactiveReason !== undefined,
    );
    expect(emittedPlugins.size).toBe(registry.length - offByDefault.length);
    expect(defaults.stderr).toMatch(/bare\.yaml names no plugin: serving the default-on set/);
    // The plugins off by default are named in one line; check-config says what each needs.
    expect(defaults.stderr).toMatch(
      /left out: off by default: .*ImagePolicyWebhook.*ValidatingAdmissionPolicy \(npm run check-config says what each needs/,
    );
    expect(defaults.stderr.split('\n').filter((l) => l.startsWith('left out:'))).toHaveLength(1);
    // A plugin the file names but that has nothing to judge gets its own line.
    const vap = join(dir, 'vap-bare.yaml');
    writeFileSync(
      vap,
      'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ValidatingAdmissionPolicy\n- name: AlwaysPullImages\n',
    );
    const named1 = await emit(['--base-url', 'https://admission.example.com', '--admission-config', vap], registry);
    expect(named1.stderr).toMatch(
      /left out: ValidatingAdmissionPolicy \(validating-admission-policy\) is inactive: no policies to judge/,
    );

    const named = await emit(
      ['--base-url', 'https://admission.example.com', '--admission-config', bare, '--plugins', 'image-policy-webhook'],
      registry,
    );
    expect(named.code).toBe(2);
    expect(named.stdout).toBe('');
    expect(named.stderr).toMatch(/--plugins: ImagePolicyWebhook \(image-policy-webhook\) is inactive/);

    const configured = await emit(
      [
        '--base-url',
        'https://admission.example.com',
        '--admission-config',
        'config/examples/image-policy-webhook.yaml',
        '--plugins',
        'image-policy-webhook',
      ],
      registry,
    );
    expect(configured.code, configured.stderr).toBe(0);
    expect(documents(configured.stdout)).toHaveLength(2);
  });

  it('a file that names plugins emits exactly those, and --plugins cannot add another', async () => {
    const three = join(dir, 'three.yaml');
    writeFileSync(
      three,
      stringify({
        apiVersion: 'apiserver.config.k8s.io/v1',
        kind: 'AdmissionConfiguration',
        plugins: [
          { name: 'AlwaysPullImages' },
          {
            name: 'PodNodeSelector',
            configuration: { podNodeSelectorPluginConfig: { clusterDefaultNodeSelector: 'env=dev' } },
          },
          { name: 'PodSecurity' },
          { name: 'LimitRanger' },
          { name: 'ServiceAccount' },
        ],
      }),
    );
    const run = await emit(['--base-url', 'https://admission.example.com', '--admission-config', three], registry);
    expect(run.code, run.stderr).toBe(0);
    const emitted = documents(run.stdout).map((d) => `${d.kind}/${d.metadata.name}`);
    expect(emitted.sort()).toEqual(
      [
        'MutatingWebhookConfiguration/serverless-admission-always-pull-images',
        'ValidatingWebhookConfiguration/serverless-admission-always-pull-images',
        'MutatingWebhookConfiguration/serverless-admission-pod-node-selector',
        'ValidatingWebhookConfiguration/serverless-admission-pod-node-selector',
        'ValidatingWebhookConfiguration/serverless-admission-pod-security',
        'MutatingWebhookConfiguration/serverless-admission-limit-ranger',
        'ValidatingWebhookConfiguration/serverless-admission-limit-ranger',
      ].sort(),
    );
    expect(run.stderr).toMatch(/three\.yaml names 4 of the served plugins: serving exactly those \(4 active\)/);
    expect(run.stderr).toMatch(/ServiceAccount: not served by this project, entry ignored/);
    // Plugins the file leaves out are not listed one by one.
    expect(run.stderr).not.toMatch(/ResourceQuota/);
    // Before anything is applied: what the learning plugins need loaded, as one command.
    expect(run.stderr).toContain(
      'before you apply: these plugins answer from what they learn of the cluster: LimitRanger (limitranges); PodNodeSelector (namespaces); PodSecurity (namespaces)\n',
    );
    expect(run.stderr).toContain('  kubectl get limitranges,namespaces -A -o json | npm run -s sync -- --from -\n');

    const other = await emit(
      ['--base-url', 'https://admission.example.com', '--admission-config', three, '--plugins', 'resource-quota'],
      registry,
    );
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/--plugins: ResourceQuota \(resource-quota\) is inactive: not named in .*three\.yaml/);
  });

  it('fails with the plugin and field on a misspelt configuration', async () => {
    const typo = join(dir, 'typo.yaml');
    writeFileSync(
      typo,
      'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodNodeSelectr\n',
    );
    const run = await emit(['--base-url', 'https://admission.example.com', '--admission-config', typo], registry);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^emit: invalid configuration: AdmissionConfiguration: plugins\[0\]\.name: unknown admission plugin "PodNodeSelectr".*did you mean "PodNodeSelector"\?\n$/,
    );
  });

  it('configuration-driven rules come from the loaded AdmissionConfiguration', async () => {
    const config = join(dir, 'admission.yaml');
    writeFileSync(
      config,
      'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PolicyEvaluator\n  configuration:\n    resources: [statefulsets, daemonsets]\n',
    );
    const run = await emit(
      ['--base-url', 'https://admission.example.com', '--admission-config', config],
      [configDriven],
    );
    expect(run.code, run.stderr).toBe(0);
    const docs = documents(run.stdout);
    expectGoodPractice(docs, [configDriven]);
    expect(docs[0].webhooks[0].rules).toEqual([
      {
        operations: ['CREATE'],
        apiGroups: ['apps'],
        apiVersions: ['v1'],
        resources: ['statefulsets', 'daemonsets'],
        scope: '*',
      },
    ]);
    const viaEnv = await emit(['--base-url', 'https://admission.example.com'], [configDriven], {
      ADMISSION_CONFIG: config,
    });
    expect(documents(viaEnv.stdout)[0].webhooks[0].rules[0].resources).toEqual(['statefulsets', 'daemonsets']);
  });

  it('never lets a webhook be called for leases, tokenreviews or subjectaccessreviews', async () => {
    // Named outright: refused.
    for (const rule of [
      { operations: ['UPDATE'], apiGroups: ['coordination.k8s.io'], apiVersions: ['v1'], resources: ['leases'] },
      {
        operations: ['CREATE'],
        apiGroups: ['authorization.k8s.io'],
        apiVersions: ['v1'],
        resources: ['subjectaccessreviews'],
      },
    ] as WebhookRule[]) {
      const greedy = fakePlugin('GreedyPlugin', {
        validating: { rules: [rule], failurePolicy: 'Fail', timeoutSeconds: 3 },
      });
      const run = await emit(['--base-url', 'https://admission.example.com'], [greedy]);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/greedy-plugin: a validate rule .* names/);
    }
    // Reached by wildcards: excluded with a matchCondition, scope considered.
    const everything = fakePlugin('EverythingPlugin', {
      validating: {
        rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }],
        failurePolicy: 'Fail',
        timeoutSeconds: 3,
      },
    });
    const namespaced = fakePlugin('NamespacedPlugin', {
      validating: {
        rules: [
          { operations: ['CREATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: 'Namespaced' },
        ],
        failurePolicy: 'Fail',
        timeoutSeconds: 3,
      },
    });
    const run = await emit(['--base-url', 'https://admission.example.com'], [everything, namespaced]);
    expect(run.code, run.stderr).toBe(0);
    const docs = documents(run.stdout);
    expectGoodPractice(docs, [everything, namespaced]);
    const conditionOf = (i: number) =>
      docs[i].webhooks[0].matchConditions.find((c: Doc) => c.name === 'exclude-protected-resources').expression;
    expect(conditionOf(0)).toMatch(/leases.*tokenreviews.*subjectaccessreviews/);
    expect(conditionOf(1)).toMatch(/leases/);
    expect(conditionOf(1)).not.toMatch(/tokenreviews|subjectaccessreviews/);
    // Which clusters without matchConditions cannot have.
    const old = await emit(['--base-url', 'https://admission.example.com', '--no-match-conditions'], [everything]);
    expect(old.code).toBe(2);
    expect(old.stderr).toMatch(/only a matchCondition can exclude/);
  });

  it("never prints what kubectl apply would refuse, and says why in the apiserver's words", async () => {
    const greedy = fakePlugin('GreedyPlugin', {
      validating: {
        rules: [{ ...podRule, resources: ['*', '*/*'] }],
        failurePolicy: 'Ignore',
        timeoutSeconds: 2,
        matchConditions: [{ name: 'not-leases', expression: "request.resource.resource != 'leases'" }],
      },
    });
    const run = await emit(['--base-url', 'https://admission.example.com'], [greedy]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(
      `webhooks[0].rules[0].resources: Invalid value: ["*","*/*"]: if '*/*' is present, must not specify other resources`,
    );
  });

  it('refuses timeouts over 10 s', async () => {
    const slow = fakePlugin('SlowPlugin', {
      validating: { rules: [podRule], failurePolicy: 'Fail', timeoutSeconds: 30 },
    });
    expect((await emit(['--base-url', 'https://admission.example.com'], [slow])).stderr).toMatch(
      /timeoutSeconds must be an integer from 1 to 10/,
    );
  });
});

describe('url-secret mode', () => {
  it('creates a 0600 deployment key, puts a capability for each webhook alone in its URL, prints only the public key', async () => {
    const out = join(dir, 'url-secret-out');
    const keyFile = join(dir, 'deployment-key');
    const base = 'https://abc.execute-api.eu-west-1.amazonaws.com/prod';
    const run = await emit(['--base-url', base, '--auth', 'url-secret', '--secret-file', keyFile, '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(out, 'webhooks.yaml')).mode & 0o777).toBe(0o600);
    const pem = readFileSync(keyFile, 'utf8');
    const key = createPrivateKey(pem);
    expect(key.asymmetricKeyType).toBe('ed25519');
    const publicKey = publicKeyText(key);
    expect(run.stderr).toContain(`--param="urlCapabilityKeys=${publicKey}"`);
    const privateBytes = key.export({ format: 'jwk' }).d!;
    for (const text of [run.stdout, run.stderr]) {
      expect(text).not.toContain(pem.split('\n')[1]);
      expect(text).not.toContain(privateBytes);
    }
    const docs = documents(run.stdout);
    expectGoodPractice(docs, registry);
    const verifier = new CapabilityVerifier([publicKey]);
    const shape = new RegExp(`^${base.replace(/\./g, '\\.')}/([A-Za-z0-9_-]{86})/([a-z-]+)/(mutate|validate|learn)$`);
    const seen = new Map<string, string>();
    for (const doc of docs) {
      expect(doc.metadata.annotations['serverless-admission.io/caller-auth']).toBe('url-secret');
      for (const webhook of doc.webhooks) {
        const match = shape.exec(webhook.clientConfig.url);
        expect(match, webhook.clientConfig.url).not.toBeNull();
        const [, capability, plugin, endpoint] = match! as unknown as [string, string, string, Endpoint];
        expect(webhook.name.startsWith(`${plugin}.${endpoint}`)).toBe(true);
        // The capability grants this endpoint of this plugin, and no other endpoint of it.
        const deployment = deploymentOfBaseUrl(base);
        expect(verifier.check(capability, { deployment, grant: { plugin, endpoint } })).toBeDefined();
        for (const other of ENDPOINTS.filter((e) => e !== endpoint))
          expect(verifier.check(capability, { deployment, grant: { plugin, endpoint: other } })).toBeUndefined();
        seen.set(`${plugin}/${endpoint}`, capability);
      }
    }
    // One capability per endpoint: no two endpoints share one.
    expect(new Set(seen.values()).size).toBe(seen.size);
    expect([...seen.keys()].some((k) => k.endsWith('/learn'))).toBe(true);

    // Re-running reuses the key (the same URLs); --public-key prints the deployment's half alone;
    // --new-secret refuses to overwrite a key that may be live.
    const again = await emit(['--base-url', base, '--auth', 'url-secret', '--secret-file', keyFile]);
    expect(documents(again.stdout)).toEqual(docs);
    const printed = await emit(['--auth', 'url-secret', '--public-key', '--secret-file', keyFile]);
    expect(printed.stdout).toBe(`URL_CAPABILITY_KEY=${publicKey}\n`);
    const overwrite = await emit([
      '--base-url',
      base,
      '--auth',
      'url-secret',
      '--new-secret',
      '--secret-file',
      keyFile,
    ]);
    expect(overwrite.code).toBe(2);
    expect(overwrite.stderr).toMatch(/already exists/);
  });
});

describe('--out for mTLS: the apiserver side', () => {
  /** k8s.io/apiserver/pkg/util/webhook/authentication.go, as test/fixtures/apiserver/README.md describes it. */
  function apiserverPicksUser(users: { name: string }[], webhookUrl: string): string | undefined {
    const url = new URL(webhookUrl);
    const host = url.port === '' ? `${url.hostname}:443` : `${url.hostname}:${url.port}`;
    const names = new Set(users.map((u) => u.name));
    if (names.has(host)) return host;
    const [bare, port] = [
      host.slice(0, host.lastIndexOf(':')).replace(/^\[(.*)\]$/, '$1'),
      host.slice(host.lastIndexOf(':') + 1),
    ];
    if (port === '443' && names.has(bare)) return bare;
    return names.has('*') ? '*' : undefined;
  }

  it.each([
    ['https://127.0.0.1:8443', '127.0.0.1:8443'],
    ['https://admission.example.com', 'admission.example.com'],
    ['https://admission.example.com:443/prefix', 'admission.example.com'],
    ['https://admission.example.com:9443', 'admission.example.com:9443'],
  ])(
    '%s: kubeconfig user %s with the client certificate, and the AdmissionConfiguration naming it',
    async (baseUrl, user) => {
      const pki = testPki();
      const out = join(dir, `out-${user.replace(/[^a-z0-9]/gi, '_')}`);
      writeFileSync(join(dir, 'client.crt'), pki.client.certPem);
      writeFileSync(join(dir, 'client.key'), pki.client.keyPem);
      const run = await emit([
        '--base-url',
        baseUrl,
        '--out',
        out,
        '--client-cert',
        join(dir, 'client.crt'),
        '--client-key',
        join(dir, 'client.key'),
      ]);
      expect(run.code, run.stderr).toBe(0);
      expect(readFileSync(join(out, 'webhooks.yaml'), 'utf8')).toBe(run.stdout);

      const kubeconfig = parseYaml(readFileSync(join(out, 'kubeconfig.yaml'), 'utf8'));
      expect(statSync(join(out, 'kubeconfig.yaml')).mode & 0o777).toBe(0o600);
      expect(kubeconfig).toMatchObject({ apiVersion: 'v1', kind: 'Config' });
      expect(kubeconfig.users.map((u: Doc) => u.name)).toEqual([user]);
      expect(kubeconfigUserName(baseUrl)).toBe(user);
      const entry = kubeconfig.users[0].user;
      expect(Buffer.from(entry['client-certificate-data'], 'base64').toString()).toBe(pki.client.certPem);
      expect(Buffer.from(entry['client-key-data'], 'base64').toString()).toBe(pki.client.keyPem);
      // Every emitted webhook URL gets this user, as the apiserver resolves it.
      for (const doc of documents(run.stdout))
        expect(apiserverPicksUser(kubeconfig.users, doc.webhooks[0].clientConfig.url)).toBe(user);

      // Plain YAML, no anchors or aliases: each entry reads on its own, in any YAML tool.
      for (const file of ['webhooks.yaml', 'kubeconfig.yaml', 'admission-configuration.yaml'])
        expect(readFileSync(join(out, file), 'utf8'), file).not.toMatch(/(^|[\s:-])[&*][A-Za-z]\w*\s*$/m);
      const admission = parseYaml(readFileSync(join(out, 'admission-configuration.yaml'), 'utf8'));
      expect(admission).toMatchObject({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AdmissionConfiguration' });
      expect(admission.plugins.map((p: Doc) => p.name).sort()).toEqual([
        'MutatingAdmissionWebhook',
        'ValidatingAdmissionWebhook',
      ]);
      for (const plugin of admission.plugins) {
        // A control-plane path, not the workstation's: the operator copies the kubeconfig there.
        expect(plugin.configuration).toEqual({
          apiVersion: 'apiserver.config.k8s.io/v1',
          kind: 'WebhookAdmissionConfiguration',
          kubeConfigFile: '/etc/kubernetes/admission/serverless-admission-kubeconfig.yaml',
        });
      }
      expect(run.stderr).toContain(
        `copy ${join(out, 'kubeconfig.yaml')} to /etc/kubernetes/admission/serverless-admission-kubeconfig.yaml`,
      );
    },
  );

  it('--kubeconfig-path sets where the apiserver reads it', async () => {
    const pki = testPki();
    writeFileSync(join(dir, 'c.crt'), pki.client.certPem);
    writeFileSync(join(dir, 'c.key'), pki.client.keyPem);
    const out = join(dir, 'out-path');
    const args = [
      '--base-url',
      'https://a.example.com',
      '--out',
      out,
      '--client-cert',
      join(dir, 'c.crt'),
      '--client-key',
      join(dir, 'c.key'),
    ];
    await emit([...args, '--kubeconfig-path', '/etc/kubernetes/admission/kubeconfig.yaml']);
    expect(
      parseYaml(readFileSync(join(out, 'admission-configuration.yaml'), 'utf8')).plugins[0].configuration
        .kubeConfigFile,
    ).toBe('/etc/kubernetes/admission/kubeconfig.yaml');
  });
});

describe('arguments', () => {
  it('prints --help on stdout', async () => {
    const run = await emit(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: npm run -s emit/);
  });

  it.each([
    [[], /--base-url is required/],
    [['--base-url', 'http://admission.example.com'], /must be https/],
    [['--base-url', 'https://admission.example.com/?x=1'], /must not have a query/],
    [['--base-url', 'https://admission.example.com/#f'], /must not have a fragment/],
    [['--base-url', 'not a url'], /is not a URL/],
    [['--base-url', 'https://a.example.com', '--plugins', 'no-such-plugin'], /unknown no-such-plugin; known: /],
    [['--base-url', 'https://a.example.com', '--auth', 'basic'], /--auth must be mtls or url-secret/],
    [['--base-url', 'https://a.example.com', '--ca-bundle', '/nonexistent/ca.crt'], /does not exist/],
    [['--base-url', 'https://a.example.com', '--staged', 'kube-system'], /not a system one/],
    [['--base-url', 'https://a.example.com', '--staged', 'Not_A_Namespace'], /is not a namespace name/],
    [['--base-url', 'https://a.example.com', '--secret-file', 'x'], /need --auth url-secret/],
    [['--base-url', 'https://a.example.com', '--out', '/tmp/x', '--client-cert', '/nonexistent.crt'], /not found/],
    [['--base-url', 'https://a.example.com', '--bogus'], /Unknown option '--bogus'/],
  ])('%j exits 2 with a clear message', async (argv, message) => {
    const run = await emit(argv as string[]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
  });
});

describe('ruleCovers: every request one rule matches, another matches too (the checks above use it)', () => {
  const rule = (resources: string[], extra: Partial<WebhookRule> = {}): WebhookRule => ({
    operations: ['CREATE', 'UPDATE', 'DELETE'],
    apiGroups: [''],
    apiVersions: ['v1'],
    resources,
    scope: '*',
    ...extra,
  });
  it.each([
    { outer: ['pods', 'pods/*'], inner: ['pods', 'pods/status', 'pods/binding'], covers: true },
    // rules.Matcher.resource: a subresource wildcard matches the resource itself too.
    { outer: ['pods/*'], inner: ['pods'], covers: true },
    { outer: ['*'], inner: ['pods', 'nodes'], covers: true },
    { outer: ['*'], inner: ['pods/status'], covers: false },
    { outer: ['*/status'], inner: ['pods/status', 'nodes/status'], covers: true },
    { outer: ['*/*'], inner: ['pods', 'pods/status'], covers: true },
    { outer: ['pods'], inner: ['nodes'], covers: false },
  ])('$outer covers $inner: $covers', ({ outer, inner, covers }) => {
    expect(ruleCovers(rule(outer), rule(inner))).toBe(covers);
  });
  it('needs every operation, group, version and the scope', () => {
    const inner = rule(['pods']);
    expect(ruleCovers(rule(['pods'], { operations: ['CREATE', 'UPDATE'] }), inner)).toBe(false);
    expect(ruleCovers(rule(['pods'], { operations: ['*'] }), inner)).toBe(true);
    expect(ruleCovers(rule(['pods'], { apiGroups: ['apps'] }), inner)).toBe(false);
    expect(ruleCovers(rule(['pods'], { apiVersions: ['*'] }), inner)).toBe(true);
    expect(ruleCovers(rule(['pods'], { scope: 'Namespaced' }), inner)).toBe(false);
    expect(ruleCovers(rule(['pods']), rule(['pods'], { scope: 'Namespaced' }))).toBe(true);
  });
});
