// Upstream's tests (plugin/pkg/admission/imagepolicy/admission_test.go) ported against a real
// HTTPS backend on 127.0.0.1 (node:https, certificates from createPki) named by a kubeconfig
// written to a temp dir: TestTLSConfig (6 of 6), TestWebhookCache (9 of 9 steps),
// TestContainerCombinations (8 of 8), TestDefaultAllow (4 of 4), TestAnnotationFiltering (2 of 2),
// TestReturnedAnnotationAdd (4 of 4). The backend is upstream's mockService. Decisions are cached in
// DynamoDB Local; each test uses its own namespace, which is part of the review and so of the key.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin, {
  FAILED_OPEN_AUDIT_KEY,
  FAILED_OPEN_POD_ANNOTATION,
  goDuration,
} from '../../functions/image-policy-webhook/plugin.js';
import type { ImagePolicyWebhookConfig } from '../../functions/image-policy-webhook/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { issueCertificate } from '../../infra/pki/pki.js';
import { testPki } from '../support/pki.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, testStore } from '../support/dynamodb.js';
import type { ReviewInput } from '../support/review.js';
import { deniedMessage, mutateIdempotently, runPhase } from '../support/review.js';

const pki = testPki();
const badCa = issueCertificate({ commonName: 'some other CA', days: 1, usage: 'ca' });
const dir = mkdtempSync(join(tmpdir(), 'image-policy-'));
let store: TestStore;
beforeAll(async () => {
  store = await testStore('image-policy-webhook');
});
afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** upstream's mockService: allow flag; "good" first image allows; any "bad" image denies. */
class MockService {
  allow = false;
  statusCode = 200;
  outAnnotations: Record<string, string> | null = null;
  calls = 0;
  received: {
    spec?: { containers?: { image?: string }[]; annotations?: Record<string, string>; namespace?: string };
  }[] = [];

  handle(req: IncomingMessage, res: ServerResponse): void {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      this.calls++;
      const review = JSON.parse(body);
      this.received.push(review);
      if (this.statusCode < 200 || this.statusCode >= 300) {
        res.writeHead(this.statusCode, { 'content-type': 'text/plain' }).end('HTTP Error\n');
        return;
      }
      const containers: { image?: string }[] = review.spec?.containers ?? [];
      let allowed = this.allow || containers[0]?.image === 'good';
      if (containers.some((c) => c.image === 'bad')) allowed = false;
      const status = { allowed, reason: allowed ? '' : 'not allowed', auditAnnotations: this.outAnnotations };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ apiVersion: 'imagepolicy.k8s.io/v1alpha1', kind: 'ImageReview', status }));
    });
  }
}

interface Backend {
  url: string;
  service: MockService;
  close(): Promise<void>;
}

/** NewTestServer: TLS with the server certificate; client certificates required when serverCA is given. */
async function backend(
  tls: { cert?: string; key?: string; clientCa?: string } | 'plain' = {
    cert: pki.server.certPem,
    key: pki.server.keyPem,
    clientCa: pki.ca.certPem,
  },
): Promise<Backend> {
  const service = new MockService();
  const handler = (req: IncomingMessage, res: ServerResponse) => service.handle(req, res);
  const server =
    tls === 'plain'
      ? createHttpServer(handler)
      : createServer(
          {
            cert: tls.cert,
            key: tls.key,
            ...(tls.clientCa && { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true }),
          },
          handler,
        );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${tls === 'plain' ? 'http' : 'https'}://127.0.0.1:${port}/imagepolicy`,
    service,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let files = 0;
const b64 = (pem: string) => Buffer.from(pem).toString('base64');

/** newImagePolicyWebhook: a kubeconfig in a temp dir and upstream's imagePolicy block. */
function configFor(
  url: string,
  opts: {
    clientCert?: boolean;
    clientCa?: string | null;
    allowTTL?: number;
    denyTTL?: number;
    defaultAllow?: boolean;
    caAsFile?: boolean;
  } = {},
): ImagePolicyWebhookConfig {
  const name = `kubeconfig-${++files}.yaml`;
  const ca = opts.clientCa === undefined ? pki.ca.certPem : opts.clientCa;
  if (opts.caAsFile && ca) writeFileSync(join(dir, `ca-${files}.pem`), ca);
  const cluster = {
    server: url,
    ...(ca &&
      (opts.caAsFile ? { 'certificate-authority': `ca-${files}.pem` } : { 'certificate-authority-data': b64(ca) })),
  };
  const user =
    opts.clientCert === false
      ? {}
      : { 'client-certificate-data': b64(pki.client.certPem), 'client-key-data': b64(pki.client.keyPem) };
  writeFileSync(
    join(dir, name),
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'backend', cluster }],
      users: [{ name: 'apiserver', user }],
      contexts: [{ name: 'c', context: { cluster: 'backend', user: 'apiserver' } }],
      'current-context': 'c',
    }),
  );
  return plugin.configure!(
    {
      imagePolicy: {
        kubeConfigFile: name,
        allowTTL: opts.allowTTL ?? 0,
        denyTTL: opts.denyTTL ?? 0,
        retryBackoff: 1,
        defaultAllow: opts.defaultAllow ?? false,
      },
    },
    { file: join(dir, 'admission.yaml'), baseDir: dir },
  ) as ImagePolicyWebhookConfig;
}

let namespaces = 0;
const goodPod = (namespace: string, image: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'pod', namespace, ...extra },
  spec: { serviceAccountName: 'default', containers: [{ name: 'c', image }] },
});
const podWith = (namespace: string, containers: string[], initContainers: string[] = []): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'pod', namespace },
  spec: {
    containers: containers.map((image, i) => ({ name: `c${i}`, image })),
    ...(initContainers.length && { initContainers: initContainers.map((image, i) => ({ name: `i${i}`, image })) }),
  },
});
const validate = (
  config: ImagePolicyWebhookConfig,
  object: KubeObject,
  extra: Partial<ReviewInput> = {},
  now?: () => number,
) => {
  const uid = `ipw-${++namespaces}`;
  return runPhase(
    plugin,
    'validate',
    { uid, object, ...extra },
    config,
    store.state({ uid, dryRun: extra.dryRun ?? false }, now),
  );
};

describe('TestTLSConfig', () => {
  const cases = [
    {
      test: 'TLS setup between client and server',
      client: { clientCert: true },
      server: { clientCa: pki.ca.certPem },
      wantAllowed: true,
    },
    { test: 'Server does not require client auth', client: { clientCert: false }, server: {}, wantAllowed: true },
    {
      test: 'Server does not require client auth, client provides it',
      client: { clientCert: true },
      server: {},
      wantAllowed: true,
    },
    {
      test: 'Client does not trust server',
      client: { clientCert: true, clientCa: null },
      server: {},
      wantAllowed: false,
    },
    {
      test: 'Server does not trust client',
      client: { clientCert: true },
      server: { clientCa: badCa.certPem },
      wantAllowed: false,
    },
  ];
  it.each(cases)('$test', async ({ client, server, wantAllowed }) => {
    const b = await backend({ cert: pki.server.certPem, key: pki.server.keyPem, ...server });
    try {
      const config = configFor(b.url, { ...client, allowTTL: -1, denyTTL: -1 });
      const namespace = `tls-${++namespaces}`;
      b.service.allow = true;
      const first = await validate(config, goodPod(namespace, String(Math.floor(Math.random() * 1000))));
      if (!wantAllowed) {
        expect(deniedMessage(first)).toMatch(
          /^pods "pod" is forbidden: Post "https:\/\/127\.0\.0\.1:\d+\/imagepolicy": /,
        );
        return;
      }
      expect(deniedMessage(first)).toBeUndefined();
      b.service.allow = false;
      expect(deniedMessage(await validate(config, goodPod(namespace, '42')))).toBe(
        'pods "pod" is forbidden: image policy webhook backend denied one or more images: not allowed',
      );
    } finally {
      await b.close();
    }
  });

  it('Server is using insecure connection: refused at configuration', async () => {
    const b = await backend('plain');
    try {
      expect(() => configFor(b.url)).toThrow(
        /^ImagePolicyWebhook: imagePolicy\.kubeConfigFile: .*server http:\/\/127\.0\.0\.1:\d+\/imagepolicy must use https$/,
      );
    } finally {
      await b.close();
    }
  });

  it('a certificate-authority file is read relative to the kubeconfig', async () => {
    const b = await backend();
    try {
      const result = await validate(configFor(b.url, { caAsFile: true }), goodPod(`tls-${++namespaces}`, 'good'));
      expect(deniedMessage(result)).toBeUndefined();
    } finally {
      await b.close();
    }
  });
});

describe('TestWebhookCache: failures are not cached, answers are (in the shared store)', () => {
  let b: Backend;
  beforeAll(async () => {
    b = await backend();
  });
  afterAll(() => b.close());

  const steps = (sequence: [number, boolean][]) =>
    sequence.map(([statusCode, authorized]) => ({ statusCode, authorized }));
  it.each([
    [
      'test',
      steps([
        [500, false],
        [404, false],
        [403, false],
        [401, false],
        [200, true],
        [500, true],
      ]),
    ],
    [
      'test2',
      steps([
        [500, false],
        [200, true],
        [500, true],
      ]),
    ],
  ])('pod with image %s', async (image, sequence) => {
    const config = configFor(b.url, { allowTTL: 200 });
    b.service.allow = true;
    const namespace = `cache-${++namespaces}`;
    for (const { statusCode, authorized } of sequence) {
      b.service.statusCode = statusCode;
      const result = await validate(config, goodPod(namespace, image));
      expect(deniedMessage(result) === undefined, `HTTP ${statusCode}`).toBe(authorized);
      if (!authorized)
        expect(deniedMessage(result)).toBe(`pods "pod" is forbidden: Error contacting webhook: ${statusCode}`);
    }
  });

  it("a cached answer expires after allowTTL (the store's clock)", async () => {
    const config = configFor(b.url, { allowTTL: 60 });
    b.service.statusCode = 200;
    b.service.allow = true;
    const namespace = `ttl-${++namespaces}`;
    let clock = Date.now() + 100 * 24 * 3600 * 1000;
    const now = () => clock;
    const calls = b.service.calls;
    await validate(config, goodPod(namespace, 'x'), {}, now);
    await validate(config, goodPod(namespace, 'x'), {}, now);
    expect(b.service.calls - calls).toBe(1);
    clock += 61_000;
    await validate(config, goodPod(namespace, 'x'), {}, now);
    expect(b.service.calls - calls).toBe(2);
  });

  it('a dry run asks the backend but sends zero writes (the cache is not filled)', async () => {
    const config = configFor(b.url, { allowTTL: 60 });
    b.service.statusCode = 200;
    const namespace = `dry-${++namespaces}`;
    store.reset();
    const invoke = lambdaFor(plugin, store, config);
    const calls = b.service.calls;
    for (let i = 0; i < 2; i++)
      expect(
        (await invoke('validate', { object: goodPod(namespace, 'good'), dryRun: true })).review!.response!.allowed,
      ).toBe(true);
    expect(b.service.calls - calls).toBe(2);
    expect(store.writes()).toBe(0);
  });
});

describe('TestContainerCombinations', () => {
  let b: Backend;
  beforeAll(async () => {
    b = await backend();
  });
  afterAll(() => b.close());
  it.each([
    ['Single container allowed', ['good'], [], true],
    ['Single container denied', ['bad'], [], false],
    ['One good container, one bad', ['bad', 'good'], [], false],
    ['Multiple good containers', ['good', 'good'], [], true],
    ['Multiple bad containers', ['bad', 'bad'], [], false],
    ['Good container, bad init container', ['good'], ['bad'], false],
    ['Bad container, good init container', ['bad'], ['good'], false],
    ['Good container, good init container', ['good'], ['good'], true],
  ] as const)('%s', async (_name, containers, init, wantAllowed) => {
    const result = await validate(configFor(b.url), podWith(`combo-${++namespaces}`, [...containers], [...init]));
    expect(deniedMessage(result)).toBe(
      wantAllowed
        ? undefined
        : 'pods "pod" is forbidden: image policy webhook backend denied one or more images: not allowed',
    );
    if (!wantAllowed) expect(result.wire.response!.status).toMatchObject({ code: 403, reason: 'Forbidden' });
  });

  it('init container images follow the containers in the review; ephemeral containers are reviewed on their subresource', async () => {
    const namespace = `order-${++namespaces}`;
    b.service.received = [];
    await validate(configFor(b.url), podWith(namespace, ['good', 'a'], ['b']));
    expect(b.service.received[0]).toEqual({
      apiVersion: 'imagepolicy.k8s.io/v1alpha1',
      kind: 'ImageReview',
      spec: { containers: [{ image: 'good' }, { image: 'a' }, { image: 'b' }], namespace },
    });
    const pod = {
      ...podWith(namespace, ['good']),
      spec: { containers: [{ name: 'c', image: 'good' }], ephemeralContainers: [{ name: 'debug', image: 'bad' }] },
    };
    const result = await validate(configFor(b.url), pod, {
      operation: 'UPDATE',
      subResource: 'ephemeralcontainers',
      oldObject: pod,
    });
    expect(deniedMessage(result)).toContain('denied one or more images: not allowed');
    expect(b.service.received[1].spec?.containers).toEqual([{ image: 'bad' }]);
  });

  it('a denial without a reason, other resources and subresources', async () => {
    const namespace = `misc-${++namespaces}`;
    const config = configFor(b.url);
    const silent = await backend();
    try {
      silent.service.handle = (req, res) => {
        req.resume();
        req.on('end', () =>
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ status: { allowed: false } })),
        );
      };
      expect(deniedMessage(await validate(configFor(silent.url), goodPod(namespace, 'x')))).toBe(
        'pods "pod" is forbidden: one or more images rejected by webhook backend',
      );
    } finally {
      await silent.close();
    }
    const calls = b.service.calls;
    const pod = goodPod(namespace, 'bad');
    expect(
      deniedMessage(await validate(config, pod, { operation: 'UPDATE', subResource: 'status', oldObject: pod })),
    ).toBeUndefined();
    expect(
      deniedMessage(await validate(config, pod, { operation: 'DELETE', object: null, oldObject: pod })),
    ).toBeUndefined();
    expect(
      deniedMessage(
        await validate(
          config,
          { kind: 'ConfigMap', metadata: { name: 'c', namespace } },
          { kind: { kind: 'ConfigMap' }, resource: { resource: 'configmaps' } },
        ),
      ),
    ).toBeUndefined();
    expect(b.service.calls).toBe(calls);
  });
});

describe('TestDefaultAllow: the backend answers 500', () => {
  let b: Backend;
  beforeAll(async () => {
    b = await backend();
    b.service.statusCode = 500;
  });
  afterAll(() => b.close());
  it.each([
    ['DefaultAllow = true, backend unreachable, bad image', 'bad', true],
    ['DefaultAllow = true, backend unreachable, good image', 'good', true],
    ['DefaultAllow = false, backend unreachable, good image', 'good', false],
    ['DefaultAllow = false, backend unreachable, bad image', 'bad', false],
  ] as const)('%s', async (_name, image, defaultAllow) => {
    const config = configFor(b.url, { defaultAllow });
    const pod = goodPod(`open-${++namespaces}`, image);
    const state = store.state({ uid: 'open', dryRun: false });
    const checked = await runPhase(plugin, 'validate', { object: pod }, config, state);
    if (!defaultAllow) {
      expect(deniedMessage(checked)).toBe('pods "pod" is forbidden: Error contacting webhook: 500');
      expect(checked.wire.response!.auditAnnotations).toBeUndefined();
      expect((await runPhase(plugin, 'mutate', { object: pod }, config, state)).patch).toEqual([]);
      return;
    }
    expect(checked.wire.response).toMatchObject({
      allowed: true,
      auditAnnotations: { [FAILED_OPEN_AUDIT_KEY]: 'true' },
    });
    // The mutating phase adds upstream's pod annotation, once.
    const mutated = await mutateIdempotently(plugin, { object: pod }, config, state);
    expect(mutated.patchedObject!.metadata!.annotations).toEqual({ [FAILED_OPEN_POD_ANNOTATION]: 'true' });
    expect(mutated.wire.response!.auditAnnotations).toEqual({ [FAILED_OPEN_AUDIT_KEY]: 'true' });
  });

  it('an unreachable backend (connection refused) fails open the same way', async () => {
    const closed = await backend();
    const config = configFor(closed.url, { defaultAllow: true });
    await closed.close();
    const result = await validate(config, goodPod(`gone-${++namespaces}`, 'good'));
    expect(result.wire.response).toMatchObject({
      allowed: true,
      auditAnnotations: { [FAILED_OPEN_AUDIT_KEY]: 'true' },
    });
  });
});

describe('annotations', () => {
  let b: Backend;
  beforeAll(async () => {
    b = await backend();
  });
  afterAll(() => b.close());

  it.each([
    ['all annotations filtered out', { test: 'test', another: 'annotation', '': '' }, undefined],
    [
      'image-policy annotations allowed',
      {
        'my.image-policy.k8s.io/test': 'test',
        'other.image-policy.k8s.io/test2': 'annotation',
        test: 'test',
        another: 'another',
        '': '',
      },
      { 'my.image-policy.k8s.io/test': 'test', 'other.image-policy.k8s.io/test2': 'annotation' },
    ],
  ])('TestAnnotationFiltering: %s', async (_name, annotations, forwarded) => {
    b.service.received = [];
    await validate(
      configFor(b.url, { defaultAllow: true }),
      goodPod(`filter-${++namespaces}`, 'good', { annotations }),
    );
    expect(b.service.received[0].spec?.annotations).toEqual(forwarded);
  });

  it.each([
    [
      'Add valid response annotations',
      'good',
      { 'foo-test': 'true', 'bar-test': 'false' },
      { 'foo-test': 'true', 'bar-test': 'false' },
    ],
    ['No returned annotations are ignored', 'good', {}, undefined],
    ['Handles nil annotations', 'good', null, undefined],
    ['Adds annotations for bad request', 'bad', { 'foo-test': 'false' }, { 'foo-test': 'false' }],
  ])('TestReturnedAnnotationAdd: %s', async (_name, image, returned, expected) => {
    b.service.outAnnotations = returned;
    const result = await validate(configFor(b.url, { defaultAllow: true }), goodPod(`returned-${++namespaces}`, image));
    // Upstream's keys are imagepolicywebhook.image-policy.k8s.io/<key>; the apiserver prefixes ours with the webhook's name.
    expect(result.wire.response!.auditAnnotations).toEqual(expected);
  });
});

describe('configure: upstream imagePolicy and its ranges', () => {
  const source = { file: join(dir, 'admission.yaml'), baseDir: dir };
  let url: string;
  let b: Backend;
  beforeAll(async () => {
    b = await backend();
    url = b.url;
  });
  afterAll(() => b.close());

  it('durations: 0 is the default, -1 disables, others are range-checked as upstream', () => {
    const config = configFor(url, { allowTTL: -1, denyTTL: 0 });
    expect({ allowTTL: config.allowTTL, denyTTL: config.denyTTL, retryBackoffMs: config.retryBackoffMs }).toEqual({
      allowTTL: 0,
      denyTTL: 30,
      retryBackoffMs: 1,
    });
    const name = `kubeconfig-${files}.yaml`;
    const entry = (fields: Record<string, unknown>) => ({ imagePolicy: { kubeConfigFile: name, ...fields } });
    expect(() => plugin.configure!(entry({ allowTTL: 3600 }), source)).toThrow(
      'ImagePolicyWebhook: imagePolicy.allowTTL: valid value is between 1s and 30m0s, got 1h0m0s',
    );
    expect(() => plugin.configure!(entry({ denyTTL: 1 }), source)).toThrow(
      'ImagePolicyWebhook: imagePolicy.denyTTL: valid value is between 1s and 30m0s, got 1s',
    );
    expect(() => plugin.configure!(entry({ retryBackoff: 400000 }), source)).toThrow(
      'ImagePolicyWebhook: imagePolicy.retryBackoff: valid value is between 1ns and 5m0s, got 6m40s',
    );
    expect(() => plugin.configure!(entry({ defaultAllow: 'yes' }), source)).toThrow(
      /imagePolicy\.defaultAllow: must be true or false/,
    );
    expect(() => plugin.configure!({ imagePolicy: { kubeConfigFile: 'missing.yaml' } }, source)).toThrow(
      /imagePolicy\.kubeConfigFile: .*missing\.yaml: no such file/,
    );
    expect(() => plugin.configure!({ imagePolicy: {} }, source)).toThrow(/imagePolicy\.kubeConfigFile: required/);
    expect(() => plugin.configure!(entry({ denyTTl: 5 }), source)).toThrow(
      'ImagePolicyWebhook: imagePolicy.denyTTl: unknown field "denyTTl"; did you mean "denyTTL"?',
    );
    expect(goDuration(1.5e9)).toBe('1.5s');
  });

  it('no entry: the webhook fails (HTTP 500) instead of allowing, as upstream refuses to start', async () => {
    const config = plugin.configure!(undefined, source);
    const result = await lambdaFor(plugin, store, config)('validate', { object: goodPod('none', 'good') });
    expect(result.statusCode).toBe(500);
  });

  it("the example AdmissionConfiguration parses (its kubeconfig path is the operator's)", () => {
    const example = parseYaml(readFileSync('config/examples/image-policy-webhook.yaml', 'utf8')) as {
      plugins: { name: string; configuration: { imagePolicy: Record<string, unknown> } }[];
    };
    const entry = example.plugins.find((p) => p.name === 'ImagePolicyWebhook')!.configuration.imagePolicy;
    expect(Object.keys(entry).sort()).toEqual([
      'allowTTL',
      'defaultAllow',
      'denyTTL',
      'kubeConfigFile',
      'retryBackoff',
    ]);
  });
});
