// One `npm start` serving a fleet of two clusters against two real kube-apiservers: `blue`
// (PodNodeSelector, ResourceQuota) and `green` (AlwaysPullImages, ResourceQuota). Each gets exactly
// its plugins, the same namespace name in both is judged by its own cluster's state, a capability
// of one cluster is refused at the other's URLs, a flood at one cluster's URLs beyond its share
// (429) leaves every review of the other answered, and removing one cluster leaves the other working.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import type { Fleet } from './support/fleet.js';
import { startFleet } from './support/fleet.js';
import type { KubeObject } from './support/kube.js';
import { create, createNamespace, pod, webhookDenial } from './support/kube.js';
import { post } from '../support/https-client.js';

const configuration = (...names: string[]) =>
  `apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n${names.map((n) => `  - name: ${n}\n`).join('')}`;

let fleet: Fleet;
let blue: ControlPlane;
let green: ControlPlane;

beforeAll(async () => {
  fleet = await startFleet({
    clusters: {
      blue: configuration('PodNodeSelector', 'ResourceQuota'),
      green: configuration('AlwaysPullImages', 'ResourceQuota'),
    },
    // blue's share is small, so a flood from this test exceeds it at once.
    settings: { blue: 'throttle: {requestsPerSecond: 5, burst: 5}\n' },
    // The built-in ResourceQuota off, so only the webhook counts.
    controlPlane: { disableAdmissionPlugins: ['ResourceQuota'] },
    dynamodbEndpoint: inject('dynamodbEndpoint'),
  });
  blue = fleet.clusters.get('blue')!.cluster;
  green = fleet.clusters.get('green')!.cluster;
  for (const cluster of [blue, green])
    await createNamespace(cluster, 'team', {
      annotations: { 'scheduler.alpha.kubernetes.io/node-selector': 'env=team' },
    });
});

afterAll(async () => {
  await fleet?.stop();
});

const quota = (pods: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name: `pods-${pods}`, namespace: 'team' },
  spec: { hard: { pods } },
});

/** The webhook URLs emit wrote for a cluster (url-secret: each with its capability). */
const urlsOf = (name: string) => [...fleet.clusters.get(name)!.webhooks.matchAll(/url: (\S+)/g)].map((m) => m[1]);

describe('a fleet of two clusters on one server', () => {
  it('emits for each cluster exactly its plugins, at /<cluster>/ URLs', () => {
    const plugins = (name: string) =>
      [...new Set(urlsOf(name).map((url) => new URL(url).pathname.split('/')[3]))].sort();
    expect(plugins('blue')).toEqual(['pod-node-selector', 'resource-quota']);
    expect(plugins('green')).toEqual(['always-pull-images', 'resource-quota']);
    for (const name of ['blue', 'green'])
      for (const url of urlsOf(name)) expect(new URL(url).pathname.startsWith(`/${name}/`)).toBe(true);
  });

  it("each cluster's pods get its own plugins' mutations and nothing of the other's", async () => {
    const inBlue = await create(
      blue,
      pod('team', 'mutated', { containers: [{ name: 'c', image: 'app:1', imagePullPolicy: 'IfNotPresent' }] }),
    );
    const inGreen = await create(
      green,
      pod('team', 'mutated', { containers: [{ name: 'c', image: 'app:1', imagePullPolicy: 'IfNotPresent' }] }),
    );
    expect(inBlue.status, inBlue.message).toBe(201);
    expect(inGreen.status, inGreen.message).toBe(201);
    const spec = (object: KubeObject | undefined) =>
      object?.spec as { nodeSelector?: Record<string, string>; containers: { imagePullPolicy: string }[] };
    // blue: PodNodeSelector put the namespace's selector on; AlwaysPullImages is not blue's.
    expect(spec(inBlue.object).nodeSelector).toEqual({ env: 'team' });
    expect(spec(inBlue.object).containers[0].imagePullPolicy).toBe('IfNotPresent');
    // green: AlwaysPullImages; PodNodeSelector is not green's, whatever green's namespace says.
    expect(spec(inGreen.object).nodeSelector).toBeUndefined();
    expect(spec(inGreen.object).containers[0].imagePullPolicy).toBe('Always');
  });

  it("judges the same namespace name by its own cluster's quota", async () => {
    // Each cluster holds one pod in `team` already; green's `team` gets a quota of 2 pods, blue's none.
    expect((await create(green, quota('2'))).status).toBe(201);
    expect((await create(green, pod('team', 'second'))).status).toBe(201);
    const third = await create(green, pod('team', 'third'));
    expect(third.status).toBe(403);
    expect(webhookDenial(third.message)?.webhook).toMatch(/^resource-quota\./);
    // blue's `team` has no quota of its own: green's quota and green's pods count for nothing here.
    for (const name of ['second', 'third', 'fourth']) expect((await create(blue, pod('team', name))).status).toBe(201);
  });

  it("refuses one cluster's capability at the other's URLs (403)", async () => {
    const caPem = readFileSync(join(fleet.workdir, '.local/pki/ca.crt'), 'utf8');
    const review = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'cross-cluster',
        kind: { group: '', version: 'v1', kind: 'Pod' },
        resource: { group: '', version: 'v1', resource: 'pods' },
        operation: 'CREATE',
        namespace: 'team',
        userInfo: { username: 'tester' },
        object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x', namespace: 'team' }, spec: { containers: [] } },
      },
    });
    const greenQuota = urlsOf('green').find((url) => url.includes('/resource-quota/validate'))!;
    expect((await post(greenQuota, review, { caPem })).status).toBe(200);
    const atBlue = greenQuota.replace('/green/', '/blue/');
    const refused = await post(atBlue, review, { caPem });
    expect(refused.status).toBe(403);
    expect(refused.body).toBe('caller capability missing or not valid\n');
  });

  it("a flood at blue's URLs beyond its share (429) leaves every pod of green admitted through its webhook", async () => {
    const caPem = readFileSync(join(fleet.workdir, '.local/pki/ca.crt'), 'utf8');
    const blueSelector = urlsOf('blue').find((url) => url.includes('/pod-node-selector/mutate'))!;
    const review = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'flood',
        kind: { group: '', version: 'v1', kind: 'Pod' },
        resource: { group: '', version: 'v1', resource: 'pods' },
        operation: 'CREATE',
        namespace: 'team',
        userInfo: { username: 'flooder' },
        object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'f', namespace: 'team' }, spec: { containers: [] } },
      },
    });
    const statuses = new Map<number, number>();
    let flooding = true;
    let throttled: () => void = () => {};
    const firstThrottle = new Promise<void>((resolve) => (throttled = resolve));
    const flooder = async () => {
      while (flooding) {
        const { status } = await post(blueSelector, review, { caPem });
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status === 429) throttled();
      }
    };
    // A namespace of its own in green: the quota test left team's pods at their limit.
    await createNamespace(green, 'during-flood');
    const flood = Promise.all(Array.from({ length: 8 }, flooder));
    try {
      await firstThrottle;
      // While blue is refused beyond its share, green's apiserver creates pods through its webhook.
      for (let i = 0; i < 10; i++) {
        const created = await create(
          green,
          pod('during-flood', `pod-${i}`, {
            containers: [{ name: 'c', image: 'app:1', imagePullPolicy: 'IfNotPresent' }],
          }),
        );
        expect(created.status, created.message).toBe(201);
        const spec = created.object?.spec as { containers?: { imagePullPolicy?: string }[] } | undefined;
        const containers = spec?.containers ?? [];
        // The mutation shows green's webhook answered within its timeoutSeconds: past it, the
        // apiserver would have applied failurePolicy Ignore and admitted the pod unchanged.
        expect(containers[0]?.imagePullPolicy).toBe('Always');
      }
    } finally {
      flooding = false;
      await flood;
    }
    // Every flood request was either admitted within blue's share or refused with 429, nothing else.
    expect([...statuses.keys()].sort()).toEqual([200, 429]);
    expect(statuses.get(429)).toBeGreaterThan(statuses.get(200) ?? 0);
  });

  it('removing a cluster (its file deleted, the server restarted) leaves the other working', async () => {
    const blueQuota = urlsOf('blue').find((url) => url.includes('/resource-quota/validate'))!;
    await fleet.removeCluster('green');
    const caPem = readFileSync(join(fleet.workdir, '.local/pki/ca.crt'), 'utf8');
    const greenUrl = urlsOf('green').find((url) => url.includes('/always-pull-images/mutate'))!;
    const gone = await post(greenUrl, '{}', { caPem });
    expect(gone.status).toBeGreaterThanOrEqual(400);
    expect(gone.status).toBeLessThan(500);
    expect(blueQuota.startsWith(fleet.serverUrl)).toBe(true);
    const stillBlue = await create(
      blue,
      pod('team', 'after-removal', { containers: [{ name: 'c', image: 'app:1', imagePullPolicy: 'IfNotPresent' }] }),
    );
    expect(stillBlue.status, stillBlue.message).toBe(201);
    expect((stillBlue.object?.spec as { nodeSelector?: Record<string, string> } | undefined)?.nodeSelector).toEqual({
      env: 'team',
    });
  });
});
