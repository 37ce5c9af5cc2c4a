// persistent-volume-claim-resize through a real kube-apiserver, against the built-in
// PersistentVolumeClaimResize (on by default, so disabled on the webhook's apiserver) on a second
// one: a bound claim grows only when its StorageClass (learned from the API) allows expansion; the
// same refusal and stored claims, a dry run, and failurePolicy Fail during an outage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';
import type { KubeObject } from './support/kube.js';
import { admittedShape, create, get, update, webhookDenial } from './support/kube.js';
import type { WebhookCluster } from './support/webhook-cluster.js';
import { startWebhookCluster } from './support/webhook-cluster.js';

const CONFIG = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: PersistentVolumeClaimResize
`;

function storageClass(name: string, allowVolumeExpansion: boolean): KubeObject {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name },
    provisioner: 'example.com/disks',
    allowVolumeExpansion,
  };
}

function claim(name: string, storageClassName: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default' },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      storageClassName,
      volumeName: `pv-${name}`,
    },
  };
}

/** A claim as a provisioner leaves it: created, then marked Bound through the status subresource. */
async function boundClaim(cluster: ControlPlane, name: string, storageClassName: string): Promise<KubeObject> {
  const created = await create(cluster, claim(name, storageClassName));
  if (created.status !== 201) throw new Error(`claim ${name}: ${created.message}`);
  const bound = await cluster.request('PUT', `/api/v1/namespaces/default/persistentvolumeclaims/${name}/status`, {
    ...created.object,
    status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } },
  });
  if (bound.status !== 200) throw new Error(`claim ${name} status: ${bound.body}`);
  return bound.json<KubeObject>();
}

const grown = (object: KubeObject, storage = '2Gi'): KubeObject => ({
  ...object,
  spec: { ...(object.spec as object), resources: { requests: { storage } } },
});

let webhook: WebhookCluster;
let builtin: ControlPlane;

beforeAll(async () => {
  [webhook, builtin] = await Promise.all([
    startWebhookCluster({
      admissionConfiguration: CONFIG,
      controlPlane: { controllerManager: false, disableAdmissionPlugins: ['PersistentVolumeClaimResize'] },
    }),
    startControlPlane({ controllerManager: false }),
  ]);
  // Created through the API once the webhooks are in place, so the webhook learns them.
  for (const cluster of [webhook.cluster, builtin])
    for (const object of [storageClass('expandable', true), storageClass('fixed', false)]) {
      const answer = await create(cluster, object);
      if (answer.status !== 201) throw new Error(`StorageClass: ${answer.message}`);
    }
});
afterAll(async () => {
  await Promise.all([webhook?.stop(), builtin?.stop()]);
});

describe('persistent-volume-claim-resize', () => {
  it('lets a bound claim of an expandable class grow, stored as the built-in stores it', async () => {
    const [mine, theirs] = await Promise.all([
      boundClaim(webhook.cluster, 'grows', 'expandable'),
      boundClaim(builtin, 'grows', 'expandable'),
    ]);
    const [served, reference] = await Promise.all([
      update(webhook.cluster, grown(mine)),
      update(builtin, grown(theirs)),
    ]);
    expect(served.status, served.message).toBe(200);
    expect(reference.status, reference.message).toBe(200);
    expect(admittedShape(await get(webhook.cluster, mine))).toEqual(admittedShape(await get(builtin, theirs)));
  });

  it('refuses growing a claim whose class does not allow expansion, with the built-in’s message', async () => {
    const [mine, theirs] = await Promise.all([
      boundClaim(webhook.cluster, 'fixed', 'fixed'),
      boundClaim(builtin, 'fixed', 'fixed'),
    ]);
    const [served, reference] = await Promise.all([
      update(webhook.cluster, grown(mine)),
      update(builtin, grown(theirs)),
    ]);
    expect(reference.status).toBe(403);
    expect(reference.message).toBe(
      'persistentvolumeclaims "fixed" is forbidden: only dynamically provisioned pvc can be resized and ' +
        'the storageclass that provisions the pvc must support resize',
    );
    expect(served.status).toBe(403);
    expect(webhookDenial(served.message)).toEqual({
      webhook: 'persistent-volume-claim-resize.validate.serverless-admission.io',
      message: reference.message,
    });
    expect(admittedShape(await get(webhook.cluster, mine))).toEqual(admittedShape(await get(builtin, theirs)));
  });

  it('judges a dry run as a real request and stores nothing', async () => {
    const fixed = await boundClaim(webhook.cluster, 'dry-fixed', 'fixed');
    expect((await update(webhook.cluster, grown(fixed), { dryRun: true })).status).toBe(403);
    const expandable = await boundClaim(webhook.cluster, 'dry', 'expandable');
    const dry = await update(webhook.cluster, grown(expandable), { dryRun: true });
    expect(dry.status, dry.message).toBe(200);
    const stored = await get(webhook.cluster, expandable);
    expect((stored!.spec as { resources: unknown }).resources).toEqual({ requests: { storage: '1Gi' } });
  });

  it('during an outage refuses (failurePolicy Fail) with the apiserver’s error', async () => {
    const expandable = await boundClaim(webhook.cluster, 'outage', 'expandable');
    await webhook.stopServer();
    try {
      const answer = await update(webhook.cluster, grown(expandable));
      expect(answer.status).toBe(500);
      expect(answer.message).toMatch(
        /^Internal error occurred: failed calling webhook "persistent-volume-claim-resize\.validate\.serverless-admission\.io": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/persistent-volume-claim-resize\/validate\?timeout=\d+s": dial tcp 127\.0\.0\.1:\d+: connect: connection refused$/,
      );
    } finally {
      await webhook.startServer();
    }
    const after = await update(webhook.cluster, grown(expandable));
    expect(after.status, after.message).toBe(200);
  });
});
