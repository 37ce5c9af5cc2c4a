// Every decision path through the real Lambda handler moves the right CloudWatch metric: the EMF
// line each invocation writes is read back and checked against what the apiserver was answered.
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { allowed, denied, patched, withAuditAnnotations, withWarnings } from '../../lib/admission/decision.js';
import { definePlugin } from '../../lib/admission/plugin.js';
import type { AdmissionHandlerOptions } from '../../lib/http/admission-handler.js';
import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import { capability, TEST_DOMAIN, urlSecretAuth } from '../support/capability.js';
import { setLogSink } from '../../lib/http/log.js';
import { invocationValues } from '../../lib/metrics/emf.js';
import type { RequestOutcome } from '../../lib/metrics/index.js';
import { EMF_NAMESPACE, EmfPublisher, pluginMetrics, setEmfSink } from '../../lib/metrics/index.js';
import { powertoolsLine } from '../support/powertools-emf.js';
import { NO_STATE, StoreUnavailableError } from '../../lib/admission/ports.js';
import { review } from '../support/review.js';

/** The judge is sent what its rules match, and only that: this probe is sent everything. */
const EVERYTHING = { operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'], scope: '*' } as const;

const context = { awsRequestId: 'req-1', getRemainingTimeInMillis: () => 5000 } as unknown as Context;

class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/** A plugin whose answer each case chooses through the pod's name. */
const probe = definePlugin({
  metadata: {
    upstreamName: 'Probe',
    name: 'probe',
    summary: 'test plugin',
    mutating: { rules: [EVERYTHING], failurePolicy: 'Ignore', timeoutSeconds: 5 },
    validating: { rules: [EVERYTHING], failurePolicy: 'Fail', timeoutSeconds: 5 },
    writes: false,
    needs: [],
    systemNamespaces: 'exclude',
  },
  admit(request) {
    if (request.name === 'patch')
      return patched({ ...request.object!, metadata: { ...request.object!.metadata, labels: { patched: 'yes' } } });
    return allowed();
  },
  validate(request) {
    switch (request.name) {
      case 'deny':
        return denied('no');
      case 'too-many':
        return denied('slow down', 429, 'TooManyRequests');
      case 'warn':
        return withWarnings(allowed(), 'careful');
      case 'audit':
        return withAuditAnnotations(allowed(), { note: 'seen' });
      case 'store-down':
        throw new StoreUnavailableError('state store: unreachable');
      case 'slow':
        throw new TimeoutError('gave up');
      case 'throw':
        throw new Error('boom');
      default:
        return allowed();
    }
  },
});

/** The probe with a learning endpoint: it learns namespaces (its state is the test's). */
const learningProbe = definePlugin({ ...probe, metadata: { ...probe.metadata, needs: ['namespaces'] } });

const pod = (name: string, extra: object = {}) =>
  JSON.stringify(review({ object: { kind: 'Pod', metadata: { name, namespace: 'team-a' } }, ...extra }));

function event(path: string, body: string, overrides: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent {
  return {
    path,
    httpMethod: 'POST',
    headers: { 'content-type': 'application/json' },
    queryStringParameters: { timeout: '10s' },
    isBase64Encoded: false,
    body,
    requestContext: {
      identity: { clientCert: { subjectDN: 'CN=kube-apiserver-admission-client' } },
      domainName: TEST_DOMAIN,
    },
    ...overrides,
  } as unknown as APIGatewayProxyEvent;
}

interface EmfLine {
  _aws: {
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
  };
  [key: string]: unknown;
}

function emfHandler(options: AdmissionHandlerOptions<undefined> = {}, plugin = probe) {
  const lines: EmfLine[] = [];
  setEmfSink((line) => lines.push(JSON.parse(line) as EmfLine));
  const handler = createAdmissionHandler(plugin, {
    config: undefined,
    callerAuth: { mode: 'mtls', allowedSubjects: [] },
    metrics: pluginMetrics('probe', 'emf'),
    ...options,
  });
  return { handler, lines };
}

afterEach(() => {
  setEmfSink(undefined);
  setLogSink(undefined);
});

interface Case {
  name: string;
  event: APIGatewayProxyEvent;
  status: number;
  phase: string;
  decision: string;
  /** Metrics present besides Requests and Latency (ColdStarts is checked apart). */
  also?: string[];
}

const cases: Case[] = [
  {
    name: 'an allowed request',
    event: event('/probe/validate', pod('ok')),
    status: 200,
    phase: 'validate',
    decision: 'allowed',
  },
  {
    name: 'a patched request',
    event: event('/probe/mutate', pod('patch')),
    status: 200,
    phase: 'mutate',
    decision: 'patched',
  },
  {
    name: 'a mutation with nothing to change is allowed',
    event: event('/probe/mutate', pod('ok')),
    status: 200,
    phase: 'mutate',
    decision: 'allowed',
  },
  {
    name: 'an allow with warnings is warned',
    event: event('/probe/validate', pod('warn')),
    status: 200,
    phase: 'validate',
    decision: 'warned',
  },
  {
    name: 'an allow with audit annotations is audited',
    event: event('/probe/validate', pod('audit')),
    status: 200,
    phase: 'validate',
    decision: 'audited',
  },
  {
    name: 'a denial carries its code (403)',
    event: event('/probe/validate', pod('deny')),
    status: 200,
    phase: 'validate',
    decision: 'denied_403',
  },
  {
    name: 'a denial carries its code (429)',
    event: event('/probe/validate', pod('too-many')),
    status: 200,
    phase: 'validate',
    decision: 'denied_429',
  },
  {
    name: 'a dry run counts as one',
    event: event('/probe/validate', pod('ok', { dryRun: true })),
    status: 200,
    phase: 'validate',
    decision: 'allowed',
    also: ['DryRuns'],
  },
  {
    name: 'a body that is not JSON is malformed',
    event: event('/probe/validate', '{nope'),
    status: 400,
    phase: 'validate',
    decision: 'malformed_bad_request',
  },
  {
    name: 'a body without a uid is malformed',
    event: event(
      '/probe/validate',
      JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }),
    ),
    status: 400,
    phase: 'validate',
    decision: 'malformed_bad_request',
  },
  {
    name: 'a body over the limit is too large',
    event: event('/probe/validate', 'x'.repeat(7 * 1024 * 1024)),
    status: 413,
    phase: 'validate',
    decision: 'malformed_too_large',
  },
  {
    name: 'a wrong content type',
    event: event('/probe/validate', pod('ok'), { headers: { 'content-type': 'text/plain' } }),
    status: 415,
    phase: 'validate',
    decision: 'malformed_unsupported_media_type',
  },
  {
    name: 'a caller without a certificate is refused',
    event: event('/probe/validate', pod('ok'), { requestContext: { identity: {} } } as never),
    status: 403,
    phase: 'validate',
    decision: 'malformed_caller_refused',
  },
  {
    name: 'a phase the plugin does not serve',
    event: event('/probe/bogus', pod('ok')),
    status: 404,
    phase: 'none',
    decision: 'malformed_not_found',
  },
  {
    name: 'an unreachable store fails the request',
    event: event('/probe/validate', pod('store-down')),
    status: 500,
    phase: 'validate',
    decision: 'failed_store_unavailable',
    also: ['Failures', 'StoreFailures'],
  },
  {
    name: 'a timeout error is a deadline',
    event: event('/probe/validate', pod('slow')),
    status: 500,
    phase: 'validate',
    decision: 'failed_deadline',
    also: ['Failures'],
  },
  {
    name: 'a failure after the apiserver gave up is a deadline',
    event: event('/probe/validate', pod('throw'), { queryStringParameters: { timeout: '0s' } }),
    status: 500,
    phase: 'validate',
    decision: 'failed_deadline',
    also: ['Failures'],
  },
  {
    name: 'any other failure is a bug',
    event: event('/probe/validate', pod('throw')),
    status: 500,
    phase: 'validate',
    decision: 'failed_bug',
    also: ['Failures'],
  },
];

describe('EMF: one line per invocation', () => {
  it.each(cases)('$name → decision $decision', async (c) => {
    const { handler, lines } = emfHandler();
    await handler(event('/probe/validate', pod('warm-up')), context); // past the cold start
    lines.splice(0);
    const result = await handler(c.event, context);
    expect(result.statusCode).toBe(c.status);
    expect(lines).toHaveLength(1);
    const [line] = lines;
    const directive = line._aws.CloudWatchMetrics[0];
    expect(directive.Namespace).toBe(EMF_NAMESPACE);
    expect(directive.Dimensions).toEqual([
      ['service', 'plugin', 'phase'],
      ['service', 'plugin', 'decision'],
    ]);
    expect(line).toMatchObject({
      service: 'serverless-admission',
      plugin: 'probe',
      phase: c.phase,
      decision: c.decision,
      Requests: 1,
    });
    expect(typeof line.Latency).toBe('number');
    expect(directive.Metrics.map((m) => m.Name).sort()).toEqual(['Latency', 'Requests', ...(c.also ?? [])].sort());
    expect(directive.Metrics.find((m) => m.Name === 'Latency')!.Unit).toBe('Milliseconds');
  });

  it('counts the cold start on the first invocation of an instance only', async () => {
    const { handler, lines } = emfHandler();
    await handler(event('/probe/validate', pod('ok')), context);
    await handler(event('/probe/validate', pod('ok')), context);
    expect(lines.map((l) => l.ColdStarts)).toEqual([1, undefined]);
  });

  it('counts a lost observation on the learning endpoint, and its answer still stands', async () => {
    const { handler, lines } = emfHandler(
      {
        state: () => NO_STATE,
        observe: async () => {
          throw new StoreUnavailableError('state store: unreachable');
        },
      },
      learningProbe,
    );
    const namespace = (name: string) =>
      JSON.stringify(
        review({
          kind: { kind: 'Namespace' },
          resource: { resource: 'namespaces' },
          name,
          namespace: '',
          object: { kind: 'Namespace', metadata: { name } },
        }),
      );
    await handler(event('/probe/learn', namespace('warm-up')), context);
    lines.splice(0);
    const answer = await handler(event('/probe/learn', namespace('ok')), context);
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body).response).toEqual({ uid: expect.any(String), allowed: true });
    expect(lines[0]).toMatchObject({
      phase: 'learn',
      decision: 'allowed',
      Requests: 1,
      LearningLost: 1,
      StoreFailures: 1,
    });
  });

  it('never carries the caller secret, a namespace or a user', async () => {
    const secret = capability({ plugin: 'probe', endpoint: 'validate' });
    const { handler, lines } = emfHandler({ callerAuth: urlSecretAuth() });
    const send = async () => {
      expect((await handler(event(`/${secret}/probe/validate`, pod('deny')), context)).statusCode).toBe(200);
      expect((await handler(event('/wrong-secret/probe/validate', pod('deny')), context)).statusCode).toBe(403);
    };
    await send(); // logs off: the EMF lines alone
    expect(lines).toHaveLength(2);
    const text = JSON.stringify(lines);
    for (const forbidden of [secret, 'wrong-secret', 'team-a', 'tester']) expect(text).not.toContain(forbidden);
    const logs: string[] = [];
    setLogSink((line) => logs.push(line));
    await send(); // logs on: the request log carries the EMF line; the namespace is logged, not the secret
    expect(logs).toHaveLength(2);
    expect(logs.join('\n')).not.toContain(secret);
    expect(logs.join('\n')).not.toContain('wrong-secret');
    expect(logs.map((l) => JSON.parse(l).path)).toEqual(['/<redacted>/probe/validate', '/<redacted>/probe/validate']);
  });
});

describe('EMF line format', () => {
  const base: RequestOutcome = {
    phase: 'validate',
    operation: 'CREATE',
    statusCode: 200,
    decision: 'allowed',
    dryRun: false,
    learningLost: false,
    seconds: 0.0123456,
    coldStart: false,
  };
  const outcomes: [string, RequestOutcome, StoreCallsInput][] = [
    ['a plain allow', base, []],
    ['a cold dry run', { ...base, dryRun: true, coldStart: true }, []],
    ['a denial with code 429', { ...base, decision: 'denied', rejectionCode: 429 }, []],
    ['a patch', { ...base, phase: 'mutate', decision: 'patched' }, []],
    [
      'a store failure',
      { ...base, statusCode: 500, decision: undefined, failure: 'store_unavailable' },
      [
        [0.002, 'ok'],
        [0.1, 'unavailable'],
      ],
    ],
    ['a lost observation after one store call', { ...base, learningLost: true }, [[0.0031, 'unavailable']]],
    [
      'a malformed body',
      { ...base, phase: 'none', operation: '', statusCode: 400, decision: undefined, malformed: 'bad_request' },
      [],
    ],
  ];

  it.each(outcomes)('is the line Powertools Metrics serializes: %s', (_, outcome, calls) => {
    const lines: string[] = [];
    const publisher = new EmfPublisher('probe', () => (line) => lines.push(line));
    for (let round = 0; round < 2; round++) {
      // Twice: the second line comes from the cached head.
      for (const [seconds, result] of calls) publisher.storeCall({ operation: 'GetItem', seconds, result });
      publisher.request(outcome);
    }
    const ms = (s: number) => Math.round(s * 1e6) / 1000;
    const store = {
      calls: calls.length,
      latenciesMs: calls.map(([s]) => ms(s)),
      failures: calls.filter(([, r]) => r === 'unavailable').length,
    };
    const expected = powertoolsLine('probe', outcome, invocationValues(outcome, store));
    for (const line of lines) {
      const ours = JSON.parse(line) as { _aws: { Timestamp: number } };
      expect(typeof ours._aws.Timestamp).toBe('number');
      (expected._aws as { Timestamp: number }).Timestamp = ours._aws.Timestamp;
      expect(line).toBe(JSON.stringify(expected));
    }
  });
});

type StoreCallsInput = [number, 'ok' | 'unavailable'][];

describe('request log', () => {
  it('carries the Lambda request id, the cold-start flag and the apiserver timeout', async () => {
    const { handler } = emfHandler();
    const logs: Record<string, unknown>[] = [];
    setLogSink((line) => logs.push(JSON.parse(line)));
    await handler(event('/probe/validate', pod('ok')), context);
    await handler(event('/probe/validate', pod('ok')), { ...context, awsRequestId: 'req-2' } as Context);
    expect(logs.map((l) => [l.requestId, l.coldStart, l.timeout])).toEqual([
      ['req-1', true, '10s'],
      ['req-2', false, '10s'],
    ]);
  });

  it('samples plain allows and always logs refusals, failures and lost observations', async () => {
    process.env.LOG_SAMPLE_ALLOWED = '0';
    try {
      const handler = createAdmissionHandler(probe, {
        config: undefined,
        callerAuth: { mode: 'mtls', allowedSubjects: [] },
        metrics: pluginMetrics('probe', 'off'),
      });
      const logs: Record<string, unknown>[] = [];
      setLogSink((line) => logs.push(JSON.parse(line)));
      for (const name of ['ok', 'ok', 'deny', 'throw', 'patch'])
        await handler(event(`/probe/${name === 'patch' ? 'mutate' : 'validate'}`, pod(name)), context);
      await handler(event('/probe/validate', '{nope'), context);
      expect(logs.map((l) => l.statusCode)).toEqual([200, 500, 200, 400]);
      expect(logs.map((l) => (l.answer as { allowed?: boolean } | undefined)?.allowed)).toEqual([
        false,
        undefined,
        true,
        undefined,
      ]);
    } finally {
      delete process.env.LOG_SAMPLE_ALLOWED;
    }
  });

  it('carries the EMF metrics in the same line when logs are on: one write per request', async () => {
    const { handler, lines } = emfHandler();
    const logs: string[] = [];
    setLogSink((line) => logs.push(line));
    await handler(event('/probe/validate', pod('deny')), context);
    await handler(event('/probe/mutate', pod('patch')), context);
    expect(lines).toEqual([]); // nothing written apart
    expect(logs).toHaveLength(2);
    const [deny, patch] = logs.map((l) => JSON.parse(l) as EmfLine);
    // The EMF part, as CloudWatch reads it: every dimension and metric a top-level key of the line.
    for (const line of [deny, patch]) {
      const [directive] = line._aws.CloudWatchMetrics;
      expect(directive.Namespace).toBe(EMF_NAMESPACE);
      for (const dimension of directive.Dimensions.flat()) expect(typeof line[dimension]).toBe('string');
      for (const { Name } of directive.Metrics) expect(typeof line[Name]).toBe('number');
    }
    expect(deny).toMatchObject({ plugin: 'probe', phase: 'validate', decision: 'denied_403', Requests: 1 });
    expect(deny).toMatchObject({ level: 'info', statusCode: 200, answer: { allowed: false, code: 403 } });
    expect(patch).toMatchObject({ phase: 'mutate', decision: 'patched', answer: { allowed: true, patched: true } });
    // No key twice: the log's fields are the EMF line's plus its own.
    for (const line of logs) expect(line.match(/"plugin":/g)).toHaveLength(1);
  });

  it('writes the EMF line alone when the request log samples a request out', async () => {
    process.env.LOG_SAMPLE_ALLOWED = '0';
    try {
      const { handler } = emfHandler();
      const logs: string[] = [];
      setLogSink((line) => logs.push(line));
      await handler(event('/probe/validate', pod('ok')), context);
      expect(logs).toHaveLength(1);
      const line = JSON.parse(logs[0]) as EmfLine;
      expect(line).toMatchObject({ decision: 'allowed', Requests: 1 });
      expect(line.uid).toBeUndefined(); // not a log record: the metrics only
    } finally {
      delete process.env.LOG_SAMPLE_ALLOWED;
    }
  });

  it('refuses a sample rate outside 0..1 at start', () => {
    process.env.LOG_SAMPLE_ALLOWED = '2';
    try {
      expect(() =>
        createAdmissionHandler(probe, { config: undefined, callerAuth: { mode: 'mtls', allowedSubjects: [] } }),
      ).toThrow(/LOG_SAMPLE_ALLOWED/);
    } finally {
      delete process.env.LOG_SAMPLE_ALLOWED;
    }
  });
});

describe('EMF in a fleet: the cluster is a dimension', () => {
  it("names the handler's cluster in every line, with the plugin's sets and the same sets per cluster", async () => {
    const lines: EmfLine[] = [];
    setEmfSink((line) => lines.push(JSON.parse(line) as EmfLine));
    // With logs on, the request log writes the metrics line with its own fields (one write).
    setLogSink((line) => {
      if (line.includes('"_aws"')) lines.push(JSON.parse(line) as EmfLine);
    });
    // The metrics are made by the handler from its callers' cluster, as npm start and a fleet build it.
    const previous = process.env.METRICS;
    process.env.METRICS = 'emf';
    try {
      const handler = createAdmissionHandler(probe, {
        config: undefined,
        callerAuth: { mode: 'mtls', allowedSubjects: ['blue-apiserver'], cluster: 'blue' },
      });
      const blue = event('/blue/probe/validate', pod('ok'), {
        requestContext: { identity: { clientCert: { subjectDN: 'CN=blue-apiserver' } }, domainName: TEST_DOMAIN },
      } as Partial<APIGatewayProxyEvent>);
      expect((await handler(blue, {} as Context)).statusCode).toBe(200);
    } finally {
      if (previous === undefined) delete process.env.METRICS;
      else process.env.METRICS = previous;
    }
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line).toMatchObject({
      service: 'serverless-admission',
      cluster: 'blue',
      plugin: 'probe',
      phase: 'validate',
    });
    expect(line._aws.CloudWatchMetrics[0].Dimensions).toEqual([
      ['service', 'plugin', 'phase'],
      ['service', 'plugin', 'decision'],
      ['service', 'cluster', 'plugin', 'phase'],
      ['service', 'cluster', 'plugin', 'decision'],
    ]);
  });

  it('keeps a single cluster’s lines as they were: no cluster key, two sets', () => {
    const lines: string[] = [];
    new EmfPublisher('probe', () => (line) => lines.push(line)).request({
      phase: 'validate',
      operation: 'CREATE',
      statusCode: 200,
      decision: 'allowed',
      dryRun: false,
      learningLost: false,
      seconds: 0.001,
      coldStart: false,
    });
    const line = JSON.parse(lines[0]) as EmfLine;
    expect(line.cluster).toBeUndefined();
    expect(line._aws.CloudWatchMetrics[0].Dimensions).toEqual([
      ['service', 'plugin', 'phase'],
      ['service', 'plugin', 'decision'],
    ]);
  });
});
