// The cluster reader's credentials from a kubeconfig's exec plugin, as kubectl runs one: a small
// script answers an ExecCredential (v1 and v1beta1) with a token numbered by how often it ran, so
// each test sees when the plugin was asked again: not while its answer is fresh, again once it is
// about to expire, and again after the apiserver answered 401 to the token it gave.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ApiClient, ApiError } from '../../lib/kube/api-client.js';
import { KubeconfigError, kubeconfigCredentials } from '../../lib/kube/cluster-credentials.js';
import type { FakeApiserver } from '../support/fake-apiserver.js';
import { answer, namespaceObject, startFakeApiserver, status } from '../support/fake-apiserver.js';

const PLUGIN = `#!/bin/sh
n=$(cat "$PLUGIN_DIR/count" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$PLUGIN_DIR/count"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$PLUGIN_DIR/info-$n"
printf '{"apiVersion":"%s","kind":"ExecCredential","status":{"token":"token-%s","expirationTimestamp":"%s"}}' \\
  "$ANSWER_VERSION" "$n" "$EXPIRY"
`;

let apiserver: FakeApiserver;
const dirs: string[] = [];

beforeAll(async () => {
  apiserver = await startFakeApiserver();
});
afterAll(async () => {
  await apiserver.close();
});
afterEach(() => {
  apiserver.queue.splice(0);
  apiserver.received.splice(0);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A kubeconfig whose user is the plugin script (a relative command, as kubectl resolves it). */
function execKubeconfig(apiVersion: string, expiresInMs: number, answerVersion = apiVersion) {
  const dir = mkdtempSync(join(tmpdir(), 'exec-plugin-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'plugin.sh'), PLUGIN);
  chmodSync(join(dir, 'plugin.sh'), 0o755);
  const env = [
    { name: 'PLUGIN_DIR', value: dir },
    { name: 'ANSWER_VERSION', value: answerVersion },
    { name: 'EXPIRY', value: new Date(Date.now() + expiresInMs).toISOString() },
  ];
  const file = join(dir, 'kubeconfig');
  writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'reader',
      clusters: [
        {
          name: 'c',
          cluster: {
            server: apiserver.url,
            'certificate-authority-data': Buffer.from(apiserver.ca).toString('base64'),
          },
        },
      ],
      users: [{ name: 'u', user: { exec: { apiVersion, command: './plugin.sh', env, provideClusterInfo: true } } }],
      contexts: [{ name: 'reader', context: { cluster: 'c', user: 'u' } }],
    }),
  );
  const runs = () => Number(readFileSync(join(dir, 'count'), 'utf8').trim());
  const info = (n: number) => JSON.parse(readFileSync(join(dir, `info-${n}`), 'utf8'));
  return { file, runs, info };
}

const HOUR = 3_600_000;

describe('exec credential plugins', () => {
  for (const apiVersion of ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1']) {
    it(`runs a ${apiVersion} plugin once while its token is fresh, telling it the cluster`, async () => {
      const plugin = execKubeconfig(apiVersion, HOUR);
      const client = new ApiClient(kubeconfigCredentials(plugin.file));
      try {
        apiserver.queue.push(answer(200, namespaceObject('a', '1')), answer(200, namespaceObject('b', '2')));
        expect((await client.get('/api/v1/namespaces/a'))?.metadata?.name).toBe('a');
        expect((await client.get('/api/v1/namespaces/b'))?.metadata?.name).toBe('b');
        expect(apiserver.received.map((r) => r.authorization)).toEqual(['Bearer token-1', 'Bearer token-1']);
        expect(plugin.runs()).toBe(1);
        expect(plugin.info(1)).toEqual({
          apiVersion,
          kind: 'ExecCredential',
          spec: {
            interactive: false,
            cluster: {
              server: apiserver.url,
              'certificate-authority-data': Buffer.from(apiserver.ca).toString('base64'),
            },
          },
        });
      } finally {
        client.close();
      }
    });
  }

  it('asks the plugin again when its token is about to expire', async () => {
    // Expiring in 5 s: inside the renewal margin, so every request asks for a fresh token.
    const plugin = execKubeconfig('client.authentication.k8s.io/v1', 5_000);
    const client = new ApiClient(kubeconfigCredentials(plugin.file));
    try {
      apiserver.queue.push(answer(200, namespaceObject('a', '1')), answer(200, namespaceObject('a', '1')));
      await client.get('/api/v1/namespaces/a');
      await client.get('/api/v1/namespaces/a');
      expect(apiserver.received.map((r) => r.authorization)).toEqual(['Bearer token-1', 'Bearer token-2']);
      expect(plugin.runs()).toBe(2);
    } finally {
      client.close();
    }
  });

  it('asks the plugin again after a 401 and retries once with the new token', async () => {
    const plugin = execKubeconfig('client.authentication.k8s.io/v1beta1', HOUR);
    const client = new ApiClient(kubeconfigCredentials(plugin.file));
    try {
      apiserver.queue.push(status(401, 'Unauthorized', 'Unauthorized'), answer(200, namespaceObject('a', '1')));
      expect((await client.get('/api/v1/namespaces/a'))?.metadata?.name).toBe('a');
      expect(apiserver.received.map((r) => r.authorization)).toEqual(['Bearer token-1', 'Bearer token-2']);
      // A token refused twice in a row is an answer, not a loop.
      apiserver.queue.push(status(401, 'Unauthorized', 'Unauthorized'), status(401, 'Unauthorized', 'Unauthorized'));
      const refused = await client.get('/api/v1/namespaces/a').catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).status).toBe(401);
      expect(apiserver.received.map((r) => r.authorization).slice(2)).toEqual(['Bearer token-2', 'Bearer token-3']);
    } finally {
      client.close();
    }
  });

  it('refuses an answer of another apiVersion than the kubeconfig asked, repeating no token', async () => {
    const plugin = execKubeconfig('client.authentication.k8s.io/v1', HOUR, 'client.authentication.k8s.io/v1beta1');
    const credentials = kubeconfigCredentials(plugin.file);
    const refused = await credentials.present().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(KubeconfigError);
    expect((refused as Error).message).toContain(
      'answered client.authentication.k8s.io/v1beta1/ExecCredential, not client.authentication.k8s.io/v1/ExecCredential',
    );
    expect((refused as Error).message).not.toContain('token-1');
  });
});
