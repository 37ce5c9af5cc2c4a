// One `npm start` serving a fleet of two clusters against two real kube-apiservers: `blue`
// (PodNodeSelector, ResourceQuota) and `green` (AlwaysPullImages, ResourceQuota). Each gets exactly
// its plugins, the same namespace name in both is judged by its own cluster's state, a capability
// of one cluster is refused at the other's URLs, and removing one cluster leaves the other working.
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
