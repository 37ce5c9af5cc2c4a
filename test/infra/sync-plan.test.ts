// What an install must load from an existing cluster: the kinds each active plugin learns, as the
// one kubectl command emit prints before anything is applied.
import { describe, expect, it } from 'vitest';
import { plugins as registry } from '../../functions/index.js';
import { learningRules } from '../../lib/admission/learning.js';
import { seedingCommand, seedingPlan } from '../../infra/sync/plan.js';

const byName = (name: string) => registry.find((p) => p.metadata.name === name)!.metadata;

describe('seedingPlan', () => {
  it('plugins that learn nothing need nothing loaded', () => {
    const plan = seedingPlan([byName('always-pull-images'), byName('deny-service-external-ips')]);
    expect(plan.resources).toEqual([]);
  });

  it('names each learned kind once, group-qualified where kubectl needs the group', () => {
    const plan = seedingPlan([byName('pod-node-selector'), byName('pod-security'), byName('default-storage-class')]);
    expect(plan.byPlugin.get('PodNodeSelector')).toEqual(['namespaces']);
    expect(plan.byPlugin.get('DefaultStorageClass')).toEqual(['storageclasses.storage.k8s.io']);
    expect(plan.resources).toEqual(['namespaces', 'storageclasses.storage.k8s.io']);
    expect(seedingCommand(plan)).toBe(
      'kubectl get namespaces,storageclasses.storage.k8s.io -A -o json | npm run -s sync -- --from -',
    );
  });

  it('a quota ledger is recounted from every kind it charges; NodeRestriction needs pods and nodes', () => {
    expect(seedingPlan([byName('resource-quota')]).resources).toEqual(
      expect.arrayContaining(['resourcequotas', 'pods', 'secrets', 'deployments.apps', 'jobs.batch']),
    );
    expect(seedingPlan([byName('node-restriction')]).resources).toEqual(['pods', 'nodes']);
  });

  it.each(registry.map((p) => [p.metadata.name, p.metadata] as const))(
    '%s: every kind its learning webhook subscribes to is in the listing',
    (_, metadata) => {
      const listed = new Set(seedingPlan([metadata]).resources.map((r) => r.split('.')[0]));
      for (const rule of learningRules(metadata))
        for (const resource of rule.resources) {
          const main = resource.split('/')[0];
          expect(listed.has(main), `${metadata.name}: ${main}`).toBe(true);
        }
    },
  );
});
