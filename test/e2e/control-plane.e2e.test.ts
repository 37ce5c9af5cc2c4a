// The harness itself: a control plane from KUBEBUILDER_ASSETS answers as a cluster does, with its
// controller-manager (a new namespace gets its default ServiceAccount), and stop() leaves no
// process and no directory behind.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from './support/control-plane.js';
import { startControlPlane } from './support/control-plane.js';

let cluster: ControlPlane;
beforeAll(async () => {
  cluster = await startControlPlane();
});
afterAll(() => cluster?.stop());

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('control plane', () => {
  it('serves v1.36.2 to the admin kubeconfig', async () => {
    const version = await cluster.kubectl(['version', '-o', 'json']);
    expect(version.code).toBe(0);
    expect(JSON.parse(version.stdout).serverVersion.gitVersion).toMatch(/^v1\.36\.2/);
  });

  it('gives a new namespace its default ServiceAccount (the controller-manager runs)', async () => {
    expect((await cluster.kubectl(['create', 'namespace', 'harness'])).code).toBe(0);
    const deadline = Date.now() + 60_000;
    let found = false;
    while (!found && Date.now() < deadline) {
      found = (await cluster.request('GET', '/api/v1/namespaces/harness/serviceaccounts/default')).status === 200;
      if (!found) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(found).toBe(true);
  });

  it('refuses a client without a certificate', async () => {
    const answer = await fetch(`${cluster.url}/api/v1/namespaces`).catch((error: Error) => error);
    // Node's fetch does not trust the throwaway CA: the TLS handshake itself fails.
    expect(answer).toBeInstanceOf(Error);
  });

  it('stops everything it started and removes its directory', async () => {
    const other = await startControlPlane({ controllerManager: false });
    const pids = (await import('node:child_process'))
      .execFileSync('pgrep', ['-f', other.dir], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map(Number);
    expect(pids.length).toBeGreaterThanOrEqual(2); // etcd and kube-apiserver
    await other.stop();
    expect(pids.filter(alive)).toEqual([]);
    expect(existsSync(other.dir)).toBe(false);
  });
});
