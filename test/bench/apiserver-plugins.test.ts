import { describe, expect, it } from 'vitest';
import { compilers } from '../../infra/native/registry.js';
import {
  admissionConfiguration,
  answerProblem,
  BENCH_PLUGINS,
  floorProblem,
  webhookProblem,
} from './apiserver-plugins.js';
import { parse } from 'yaml';

describe('the apiserver bench plugins', () => {
  it('cover every plugin emit --native compiles', () => {
    expect(BENCH_PLUGINS.map((p) => p.name).sort()).toEqual([...compilers.keys()].sort());
  });
  it('each has an AdmissionConfiguration that parses to one plugin entry', () => {
    for (const plugin of BENCH_PLUGINS) {
      const config = parse(admissionConfiguration(plugin)) as { plugins: { name: string }[] };
      expect(config.plugins, plugin.name).toHaveLength(1);
    }
  });
});

const plugin = (name: string) => BENCH_PLUGINS.find((p) => p.name === name)!;
const status = (code: number, message: string) =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code });
const pod = (spec: Record<string, unknown>) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'bench' }, spec });

describe('answerProblem: an answer the bench must not measure', () => {
  it('passes the admission a plugin gives, with its change', () => {
    const pulled = pod({ containers: [{ name: 'c', image: 'i:1', imagePullPolicy: 'Always' }] });
    for (const path of ['built-in', 'webhook mTLS', 'native'])
      expect(answerProblem(plugin('always-pull-images'), path, { status: 201, body: pulled })).toBeUndefined();
  });
  it("names an admission without the mutating plugin's change (a webhook that failed open)", () => {
    const unchanged = pod({ containers: [{ name: 'c', image: 'i:1', imagePullPolicy: 'IfNotPresent' }] });
    expect(answerProblem(plugin('always-pull-images'), 'webhook mTLS', { status: 201, body: unchanged })).toBe(
      `always-pull-images webhook mTLS: admitted without the plugin's change: imagePullPolicy ["IfNotPresent"], not Always`,
    );
    expect(
      answerProblem(plugin('default-toleration-seconds'), 'native', { status: 201, body: pod({ containers: [] }) }),
    ).toMatch(/^default-toleration-seconds native: admitted without the plugin's change: no toleration/);
  });
  it('does not hold the path without the plugin to its change', () => {
    expect(answerProblem(plugin('always-pull-images'), 'none', { status: 201, body: pod({}) })).toBeUndefined();
  });
  it('names a failure of the path: a 500, a timeout, an unexpected refusal', () => {
    const failed = status(500, 'Internal error occurred: failed calling webhook "x": context deadline exceeded');
    expect(answerProblem(plugin('always-admit'), 'webhook capability', { status: 500, body: failed })).toBe(
      `always-admit webhook capability: 500, expected 201: ${failed}`,
    );
    expect(answerProblem(plugin('always-admit'), 'native', { status: 504, body: 'timeout' })).toMatch(
      /^always-admit native: 504, expected 201/,
    );
    expect(
      answerProblem(plugin('pod-security'), 'built-in', { status: 403, body: status(403, 'violates PodSecurity') }),
    ).toMatch(/^pod-security built-in: 403, expected 201/);
  });
  it("passes AlwaysDeny's refusal where it runs, and the admission where it does not", () => {
    const refused = status(
      403,
      'admission webhook "always-deny.validate.serverless-admission.io" denied the request: configmaps "b" is forbidden: admission control is denying all modifications',
    );
    expect(answerProblem(plugin('always-deny'), 'webhook mTLS', { status: 403, body: refused })).toBeUndefined();
    expect(answerProblem(plugin('always-deny'), 'none', { status: 201, body: '{}' })).toBeUndefined();
    expect(answerProblem(plugin('always-deny'), 'none', { status: 403, body: refused })).toMatch(
      /^always-deny none: 403, expected 201/,
    );
  });
  it('expects an update (the certificate plugins) to answer 200, admitted where no plugin runs too', () => {
    const approval = plugin('certificate-approval');
    const approved = JSON.stringify({ status: { conditions: [{ type: 'Approved', status: 'True' }] } });
    expect(answerProblem(approval, 'none', { status: 200, body: approved })).toBeUndefined();
    expect(answerProblem(approval, 'native', { status: 200, body: approved })).toBeUndefined();
    expect(answerProblem(approval, 'native', { status: 201, body: approved })).toMatch(
      /^certificate-approval native: 201, expected 200/,
    );
    const refused = status(403, 'user not permitted to approve requests with signerName "bench.example/signer"');
    expect(answerProblem(approval, 'built-in', { status: 403, body: refused })).toMatch(
      /^certificate-approval built-in: 403, expected 200/,
    );
  });
  it("names another plugin's refusal of the same status", () => {
    const other = status(403, 'pods "b" is forbidden: error looking up service account bench/default');
    expect(answerProblem(plugin('always-deny'), 'native', { status: 403, body: other })).toBe(
      `always-deny native: refused, but not with "admission control is denying all modifications": pods "b" is forbidden: error looking up service account bench/default`,
    );
    expect(answerProblem(plugin('always-deny'), 'native', { status: 403, body: '<html>' })).toMatch(
      /^always-deny native: 403 with a body that is not a Status/,
    );
  });
});

describe('webhookProblem: a webhook path that did not measure the webhooks', () => {
  it('passes a round where every request called the webhooks and none failed open', () => {
    expect(webhookProblem('p', 'webhook mTLS', 5, 10, 0)).toBeUndefined();
  });
  it('names calls that failed open', () => {
    expect(webhookProblem('p', 'webhook capability', 5, 5, 2)).toBe(
      'p webhook capability: 2 webhook calls failed open (failurePolicy Ignore): the apiserver admitted without the plugin',
    );
  });
  it('names requests that never called the webhooks', () => {
    expect(webhookProblem('p', 'webhook mTLS', 5, 3, 0)).toBe('p webhook mTLS: 3 webhook calls for 5 requests');
  });
  it('does not hold other paths to webhook calls', () => {
    expect(webhookProblem('p', 'native', 5, 0, 0)).toBeUndefined();
  });
});

describe('floorProblem: an answer the native floor must not be measured on', () => {
  const labelled = JSON.stringify({
    metadata: { name: 'p', labels: { 'serverless-admission.io/bench-floor': 'true' } },
  });
  it('passes an admission, with the label where the floor mutates', () => {
    expect(floorProblem(plugin('always-pull-images'), true, { status: 201, body: labelled })).toBeUndefined();
    expect(floorProblem(plugin('always-admit'), false, { status: 201, body: pod({}) })).toBeUndefined();
  });
  it('names an admission without the label, and any refusal', () => {
    expect(floorProblem(plugin('always-pull-images'), true, { status: 201, body: pod({}) })).toBe(
      'always-pull-images native floor: admitted without the label serverless-admission.io/bench-floor',
    );
    expect(floorProblem(plugin('always-deny'), false, { status: 403, body: status(403, 'no') })).toMatch(
      /^always-deny native floor: 403, expected 201/,
    );
  });
});
