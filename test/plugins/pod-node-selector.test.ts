// Upstream's tables (plugin/pkg/admission/podnodeselector/admission_test.go) ported: TestPodAdmission
// (10 of 10 cases, each through the mutating phase, proven idempotent, and the validating twin on
// the result) and TestHandles (4 of 4). Namespaces are learned only through the plugin's learning webhook.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin from '../../functions/pod-node-selector/plugin.js';
import type { PodNodeSelectorConfig } from '../../functions/pod-node-selector/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, namespaceReview, testStore } from '../support/dynamodb.js';
import { deniedMessage, mutateIdempotently, runPhase } from '../support/review.js';
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
