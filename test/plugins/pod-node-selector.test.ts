// Upstream's tables (plugin/pkg/admission/podnodeselector/admission_test.go) ported: TestPodAdmission
// (10 of 10 cases, each through the mutating phase, proven idempotent, and the validating twin on
// the result and on the pod as received) and TestHandles (4 of 4). Namespaces are learned only
// through the plugin's learning webhook. Then the twin on its own, as it runs when the mutating
// webhook failed open: the placement boundary holds without the merge.
import jsonpatch from 'fast-json-patch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin from '../../functions/pod-node-selector/plugin.js';
import type { PodNodeSelectorConfig } from '../../functions/pod-node-selector/plugin.js';
import { DOES_NOT_EXTEND } from '../../functions/pod-node-selector/plugin.js';
import type { AdmissionResponseWire, AdmissionReviewWire, KubeObject } from '../../lib/admission/types.js';
import type { Enforcement } from '../../lib/config/enforcement.js';
import { NO_EXEMPTIONS } from '../../lib/config/enforcement.js';
import { AUDIT_REFUSAL_KEY } from '../../lib/http/enforcement.js';
import type { Endpoint } from '../../lib/http/webhook-path.js';
import { createStatefulAdmissionHandler } from '../../lib/state/handler.js';
import type { LocalServer } from '../../infra/local/server.js';
import { startLocalServer } from '../../infra/local/server.js';
import { post } from '../support/https-client.js';
import { testPki } from '../support/pki.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, namespaceReview, testStore } from '../support/dynamodb.js';
import type { ReviewInput } from '../support/review.js';
import { deniedMessage, mutateIdempotently, review, runPhase } from '../support/review.js';
import {
  NODE_SELECTOR_ANNOTATION,
  POD_ADMISSION_CASES,
  namespaceAnnotations,
} from '../support/cases/pod-node-selector.js';

let store: TestStore;
beforeAll(async () => {
  store = await testStore('pod-node-selector');
});
afterAll(() => store.close());

const configOf = (defaultNodeSelector: string, namespace: string, whitelist?: string): PodNodeSelectorConfig => ({
  clusterNodeSelectors: {
    clusterDefaultNodeSelector: defaultNodeSelector,
    ...(whitelist !== undefined && { [namespace]: whitelist }),
  },
  unknownNamespace: 'default',
});

describe('TestPodAdmission', () => {
  it.each(POD_ADMISSION_CASES.map((c, i) => ({ ...c, i })))('$testName', async (test) => {
    const namespace = `test-namespace-${test.i}`;
    const config = configOf(test.defaultNodeSelector, namespace, test.whitelist);
    const learn = lambdaFor(plugin, store, config);
    const annotations = namespaceAnnotations(test);
    const learned = await learn('learn', namespaceReview('CREATE', namespace, { ...(annotations && { annotations }) }));
    expect(learned.review!.response!.allowed).toBe(true);

    const pod: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'testPod', namespace },
      spec: { containers: [{ name: 'c', image: 'i' }], nodeSelector: test.podNodeSelector },
    };
    const uid = `pod-${test.i}`;
    const state = store.state({ uid, dryRun: false });
    const mutated = await mutateIdempotently(plugin, { object: pod, uid }, config, state);
    if (test.admit) {
      expect(deniedMessage(mutated)).toBeUndefined();
      expect((mutated.patchedObject!.spec as { nodeSelector?: Record<string, string> }).nodeSelector ?? {}).toEqual(
        test.mergedNodeSelector,
      );
      expect(
        deniedMessage(await runPhase(plugin, 'validate', { object: mutated.patchedObject, uid }, config, state)),
      ).toBeUndefined();
      // The pod as received, had the mutating webhook failed open: refused exactly when the merge
      // had labels to add.
      const unmerged = deniedMessage(await runPhase(plugin, 'validate', { object: pod, uid }, config, state));
      if (mutated.patch.length === 0) expect(unmerged).toBeUndefined();
      else expect(unmerged).toBe(`pods "testPod" is forbidden: ${DOES_NOT_EXTEND}`);
    } else {
      expect(deniedMessage(mutated)).toMatch(
        /^pods "testPod" is forbidden: pod node label selector (conflicts with its namespace node label selector|labels conflict with its namespace whitelist)$/,
      );
      expect(mutated.wire.response!.status).toMatchObject({ code: 403, reason: 'Forbidden' });
      // The validating twin refuses the conflicting pod as received, and the merged pod a whitelist forbids.
      const merged = {
        ...pod,
        spec: {
          ...(pod.spec as object),
          nodeSelector: {
            ...test.podNodeSelector,
            ...Object.fromEntries(
              (test.namespaceNodeSelector ?? '').split(',').map((t) => t.split('=').map((x) => x.trim())),
            ),
          },
        },
      };
      expect(
        deniedMessage(
          await runPhase(plugin, 'validate', { object: test.whitelist ? merged : pod, uid }, config, state),
        ),
      ).toBeDefined();
    }
  });

  it('upstream messages verbatim', async () => {
    const namespace = 'messages';
    const config = configOf('', namespace, 'env=dev');
    await lambdaFor(
      plugin,
      store,
      config,
    )('learn', namespaceReview('CREATE', namespace, { annotations: { [NODE_SELECTOR_ANNOTATION]: 'infra=true' } }));
    const state = store.state({ uid: 'm', dryRun: false });
    const pod = (nodeSelector: Record<string, string>): KubeObject => ({
      kind: 'Pod',
      metadata: { name: 'p', namespace },
      spec: { nodeSelector },
    });
    expect(deniedMessage(await runPhase(plugin, 'validate', { object: pod({ infra: 'false' }) }, config, state))).toBe(
      'pods "p" is forbidden: pod node label selector conflicts with its namespace node label selector',
    );
    expect(
      deniedMessage(await runPhase(plugin, 'validate', { object: pod({ infra: 'true', env: 'prod' }) }, config, state)),
    ).toBe('pods "p" is forbidden: pod node label selector labels conflict with its namespace whitelist');
  });
});

describe('the validating twin holds the boundary when the mutating webhook failed open', () => {
  const TEAM = 'team-c';
  const config = configOf('', TEAM);
  const pod = (nodeSelector?: Record<string, string>, name = 'web'): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: TEAM },
    spec: { containers: [{ name: 'app', image: 'nginx' }], ...(nodeSelector && { nodeSelector }) },
  });
  const invoke = () => lambdaFor(plugin, store, config);
  beforeAll(async () => {
    const annotations = { [NODE_SELECTOR_ANNOTATION]: 'dedicated=team-c, tier=gold' };
    const learned = await invoke()('learn', namespaceReview('CREATE', TEAM, { annotations }));
    expect(learned.review!.response!.allowed).toBe(true);
  });

  it('a pod with no nodeSelector is refused, 403 Forbidden, naming the pod', async () => {
    const response = (await invoke()('validate', { object: pod(), namespace: TEAM })).review!.response!;
    expect(response.allowed).toBe(false);
    expect(response.status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: `pods "web" is forbidden: ${DOES_NOT_EXTEND}`,
    });
  });

  it('a pod carrying only part of the namespace selector is refused', async () => {
    const response = (await invoke()('validate', { object: pod({ dedicated: 'team-c' }), namespace: TEAM })).review!
      .response!;
    expect(response.status?.message).toBe(`pods "web" is forbidden: ${DOES_NOT_EXTEND}`);
  });

  it("a conflict keeps upstream's message, checked first", async () => {
    const response = (await invoke()('validate', { object: pod({ dedicated: 'team-a' }), namespace: TEAM })).review!
      .response!;
    expect(response.status?.message).toBe(
      'pods "web" is forbidden: pod node label selector conflicts with its namespace node label selector',
    );
  });

  it('a superset of the namespace selector (what the merge, or another mutation, makes) is admitted', async () => {
    const selector = { dedicated: 'team-c', tier: 'gold', 'kubernetes.io/arch': 'arm64' };
    const response = (await invoke()('validate', { object: pod(selector), namespace: TEAM })).review!.response!;
    expect(response).toEqual({ uid: response.uid, allowed: true });
  });

  it("the mutation's own output, its JSON patch applied, is admitted by the twin", async () => {
    const mutated = await invoke()('mutate', { object: pod(), namespace: TEAM });
    const response = mutated.review!.response!;
    expect(response.patchType).toBe('JSONPatch');
    const patch = JSON.parse(Buffer.from(response.patch!, 'base64').toString('utf8')) as jsonpatch.Operation[];
    const final = jsonpatch.applyPatch(structuredClone(pod()), patch, true, false).newDocument;
    const validated = (await invoke()('validate', { object: final, namespace: TEAM })).review!.response!;
    expect(validated).toEqual({ uid: validated.uid, allowed: true });
  });

  it('a dry run is refused alike (nothing is written either way)', async () => {
    store.reset();
    const response = (await invoke()('validate', { object: pod(), namespace: TEAM, dryRun: true })).review!.response!;
    expect(response.status?.message).toBe(`pods "web" is forbidden: ${DOES_NOT_EXTEND}`);
    expect(store.writes()).toBe(0);
  });

  it('the cluster default binds too, where the namespace has no annotation of its own', async () => {
    const plain = lambdaFor(plugin, store, configOf('pool=shared', 'plain'));
    await plain('learn', namespaceReview('CREATE', 'plain'));
    const response = (
      await plain('validate', {
        object: { ...pod(), metadata: { name: 'web', namespace: 'plain' } },
        namespace: 'plain',
      })
    ).review!.response!;
    expect(response.status?.message).toBe(`pods "web" is forbidden: ${DOES_NOT_EXTEND}`);
  });
});

describe('the twin through the local server (HTTPS, client certificate) and in every enforcement mode', () => {
  const TEAM = 'team-d';
  const config = configOf('', TEAM);
  const pki = testPki();
  const apiserver = { caPem: pki.ca.certPem, certPem: pki.client.certPem, keyPem: pki.client.keyPem };
  const servers: LocalServer[] = [];
  const unmerged: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: TEAM },
    spec: { containers: [{ name: 'app', image: 'nginx' }] },
  };
  const refusal = `pods "web" is forbidden: ${DOES_NOT_EXTEND}`;

  /** The deployed handler in this enforcement mode, behind a local server of its own. */
  async function serve(
    enforcement: Enforcement,
  ): Promise<(endpoint: Endpoint, input: ReviewInput) => Promise<AdmissionResponseWire>> {
    const handler = createStatefulAdmissionHandler(plugin, {
      config,
      callerAuth: { mode: 'mtls', allowedSubjects: [] },
      enforcement,
      exemptions: NO_EXEMPTIONS,
      state: (request) => store.state(request),
    });
    const server = await startLocalServer({
      handlers: new Map([[plugin.metadata.name, handler]]),
      tls: { caPem: pki.ca.certPem, certPem: pki.server.certPem, keyPem: pki.server.keyPem },
      requireClientCertificate: true,
      port: 0,
    });
    servers.push(server);
    return async (endpoint, input) => {
      const answer = await post(
        `${server.url}/${plugin.metadata.name}/${endpoint}?timeout=3s`,
        JSON.stringify(review(input)),
        apiserver,
      );
      expect(answer.status, answer.body).toBe(200);
      return (JSON.parse(answer.body) as AdmissionReviewWire).response!;
    };
  }

  afterAll(async () => {
    for (const server of servers) await server.close();
  });

  it('Deny: the pod the merge never reached is refused; the merged pod is admitted', async () => {
    const call = await serve('Deny');
    const annotations = { [NODE_SELECTOR_ANNOTATION]: 'dedicated=team-d' };
    expect((await call('learn', namespaceReview('CREATE', TEAM, { annotations }))).allowed).toBe(true);
    expect(await call('validate', { object: unmerged, namespace: TEAM })).toMatchObject({
      allowed: false,
      status: { code: 403, reason: 'Forbidden', message: refusal },
    });
    const mutated = await call('mutate', { object: unmerged, namespace: TEAM });
    const patch = JSON.parse(Buffer.from(mutated.patch!, 'base64').toString('utf8')) as jsonpatch.Operation[];
    const final = jsonpatch.applyPatch(structuredClone(unmerged), patch, true, false).newDocument;
    expect((final.spec as { nodeSelector: unknown }).nodeSelector).toEqual({ dedicated: 'team-d' });
    const admitted = await call('validate', { object: final, namespace: TEAM });
    expect(admitted).toEqual({ uid: admitted.uid, allowed: true });
  });

  it('Warn admits with the refusal as a warning; Audit with it in audit-mode-refusal', async () => {
    const warned = await (await serve('Warn'))('validate', { object: unmerged, namespace: TEAM });
    expect(warned).toMatchObject({ allowed: true, warnings: [refusal] });
    const audited = await (await serve('Audit'))('validate', { object: unmerged, namespace: TEAM });
    expect(audited).toMatchObject({ allowed: true, auditAnnotations: { [AUDIT_REFUSAL_KEY]: refusal } });
  });
});

describe('TestHandles: CREATE only', () => {
  it.each(['UPDATE', 'DELETE', 'CONNECT'] as const)('%s is not handled', async (operation) => {
    const config = configOf('infra=false', 'x');
    const pod: KubeObject = { kind: 'Pod', metadata: { name: 'p', namespace: 'x' }, spec: {} };
    const result = await runPhase(
      plugin,
      'mutate',
      { operation, object: operation === 'DELETE' ? null : pod, oldObject: pod },
      config,
      store.state({ uid: 'h', dryRun: false }),
    );
    expect(result.wire.response).toEqual({ uid: result.wire.response!.uid, allowed: true });
  });
});

describe('never-seen namespaces, dry runs, configuration', () => {
  const pod: KubeObject = { kind: 'Pod', metadata: { name: 'p', namespace: 'unseen' }, spec: {} };

  it('warn (the default): the pod is left unchanged and the validating webhook says why, naming the sync', async () => {
    const config = { ...configOf('env=dev', 'unseen'), unknownNamespace: 'warn' as const };
    const state = store.state({ uid: 'u0', dryRun: false });
    const mutated = await runPhase(plugin, 'mutate', { object: pod }, config, state);
    expect(mutated.wire.response).toEqual({ uid: mutated.wire.response!.uid, allowed: true });
    const validated = await runPhase(plugin, 'validate', { object: pod }, config, state);
    expect(validated.wire.response!.allowed).toBe(true);
    expect(validated.wire.response!.warnings).toEqual([
      'PodNodeSelector: namespace "unseen" is not learned yet, so its node selector was not applied; load the cluster\'s existing namespaces with npm run sync (docs/seed-state.md)',
    ]);
  });

  it('warn: the configured whitelist still binds, since it names the namespace and not its annotations', async () => {
    const config = { ...configOf('', 'unseen', 'infra=false'), unknownNamespace: 'warn' as const };
    const outside = { ...pod, spec: { nodeSelector: { infra: 'true' } } };
    const result = await runPhase(
      plugin,
      'validate',
      { object: outside },
      config,
      store.state({ uid: 'u3', dryRun: false }),
    );
    expect(deniedMessage(result)).toBe(
      'pods "p" is forbidden: pod node label selector labels conflict with its namespace whitelist',
    );
  });

  it('warn: once the namespace is learned, its own annotation applies, not the cluster default', async () => {
    const config = { ...configOf('env=dev', 'gpu-team'), unknownNamespace: 'warn' as const };
    const inGpu: KubeObject = { kind: 'Pod', metadata: { name: 'p', namespace: 'gpu-team' }, spec: {} };
    const before = await runPhase(
      plugin,
      'mutate',
      { object: inGpu },
      config,
      store.state({ uid: 'g1', dryRun: false }),
    );
    expect(before.patch).toEqual([]);
    await lambdaFor(
      plugin,
      store,
      config,
    )('learn', namespaceReview('CREATE', 'gpu-team', { annotations: { [NODE_SELECTOR_ANNOTATION]: 'env=gpu' } }));
    const after = await mutateIdempotently(
      plugin,
      { object: inGpu },
      config,
      store.state({ uid: 'g2', dryRun: false }),
    );
    expect((after.patchedObject!.spec as { nodeSelector: unknown }).nodeSelector).toEqual({ env: 'gpu' });
  });

  it('default: a never-seen namespace gets the cluster default', async () => {
    const result = await mutateIdempotently(
      plugin,
      { object: pod },
      configOf('infra=false', 'unseen'),
      store.state({ uid: 'u1', dryRun: false }),
    );
    expect((result.patchedObject!.spec as { nodeSelector: unknown }).nodeSelector).toEqual({ infra: 'false' });
  });

  it('reject: refused as upstream refuses a namespace it cannot find', async () => {
    const result = await runPhase(
      plugin,
      'mutate',
      { object: pod },
      { ...configOf('', 'unseen'), unknownNamespace: 'reject' },
      store.state({ uid: 'u2', dryRun: false }),
    );
    expect(result.wire.response!.status).toMatchObject({
      code: 500,
      message: 'Internal error occurred: namespace unseen does not exist',
    });
  });

  it('a dry-run namespace write sends zero writes to the store', async () => {
    store.reset();
    const config = configOf('', 'dry');
    const result = await lambdaFor(
      plugin,
      store,
      config,
    )(
      'learn',
      namespaceReview('CREATE', 'dry', { annotations: { [NODE_SELECTOR_ANNOTATION]: 'a=b' } }, { dryRun: true }),
    );
    expect(result.review!.response!.allowed).toBe(true);
    expect(store.writes()).toBe(0);
    expect(await store.state({ uid: 'r', dryRun: false }).learnedNamespaces.get('dry')).toBeUndefined();
  });

  it('configure: upstream podNodeSelectorPluginConfig, invalid selectors name the field', () => {
    const source = { file: 'admission.yaml', baseDir: '.' };
    expect(
      plugin.configure!(
        { podNodeSelectorPluginConfig: { clusterDefaultNodeSelector: 'env=dev', ns1: 'infra=true' } },
        source,
      ),
    ).toEqual({
      clusterNodeSelectors: { clusterDefaultNodeSelector: 'env=dev', ns1: 'infra=true' },
      unknownNamespace: 'warn',
    });
    expect(() => plugin.configure!({ podNodeSelectorPluginConfig: { ns1: 'infra' } }, source)).toThrow(
      /PodNodeSelector: podNodeSelectorPluginConfig.ns1: invalid selector/,
    );
    expect(plugin.configure!(undefined, source)).toEqual({ clusterNodeSelectors: {}, unknownNamespace: 'warn' });
  });
});
