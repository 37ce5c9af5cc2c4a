// The deployed cluster reader's part of serverless.yml: none adds nothing; eks and token add one
// scheduled function, its role (the reader's key prefixes only; token: its one secret or parameter;
// eks: no AWS permission beyond those) and the alarm on a stopped or lagging watcher; bad params
// are refused at packaging, naming the param. (Packaged by osls: test/infra/serverless.test.ts, which
// runs every packaging of the checkout one after another.)
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ReaderParams } from '../../infra/serverless/cluster-reader.js';
import {
  READER_ALARM_LOGICAL_ID,
  READER_KEY_PREFIXES,
  READER_MEASURED,
  READER_ROLE_LOGICAL_ID,
  readerMemoryFor,
  readerMemorySetting,
  readerParamProblems,
  readerPart,
} from '../../infra/serverless/cluster-reader.js';
import { testPki } from '../support/pki.js';

const inputs = { service: 'serverless-admission', stage: 'prod', alarmTopicArn: '' };
const params = (extra: Partial<ReaderParams>): ReaderParams => ({
  mode: 'eks',
  endpoint: 'https://ABCD.gr7.eu-west-1.eks.amazonaws.com',
  ca: Buffer.from(testPki().ca.certPem).toString('base64'),
  clusterName: 'prod',
  tokenSource: '',
  ...extra,
});
const SECRET = 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:reader-token-AbCdEf';
const PARAMETER = 'arn:aws:ssm:eu-west-1:111122223333:parameter/reader-token';

const statements = (part: any) =>
  part.Resources[READER_ROLE_LOGICAL_ID].Properties.Policies[0].PolicyDocument.Statement as any[];

describe('the cluster reader in serverless.yml', () => {
  it('none adds nothing', () => {
    expect(readerPart(params({ mode: 'none' }), inputs)).toBeUndefined();
    expect(readerParamProblems(params({ mode: 'none', endpoint: '' }))).toEqual([]);
  });

  it('eks: a function every minute, its role writing only the reader key prefixes, and the alarm', () => {
    const part = readerPart(params({}), inputs);
    const fn = part?.functions.clusterReader as Record<string, any>;
    expect(fn.events).toEqual([{ schedule: { rate: ['rate(1 minute)'] } }]);
    expect(fn.handler).toBe('infra/cluster-reader/handler.handler');
    expect(fn.timeout).toBeGreaterThan(50);
    expect(fn.environment).toEqual({
      CLUSTER_READER: 'eks',
      CLUSTER_ENDPOINT: 'https://ABCD.gr7.eu-west-1.eks.amazonaws.com',
      CLUSTER_CA: params({}).ca,
      CLUSTER_NAME: 'prod',
    });
    const actions = statements(part).flatMap((s) => s.Action);
    expect(actions.filter((a: string) => !a.startsWith('logs:') && !a.startsWith('dynamodb:'))).toEqual([]);
    const table = statements(part).find((s) => s.Action.includes('dynamodb:PutItem'));
    expect(table.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': READER_KEY_PREFIXES } });
    const alarm = (part?.Resources[READER_ALARM_LOGICAL_ID] as any)?.Properties;
    expect(alarm).toMatchObject({ MetricName: 'ReaderLagSeconds', TreatMissingData: 'breaching' });
  });

  it('token: reads only its own secret or parameter, and holds the ARN, never a token', () => {
    for (const [source, action] of [
      [SECRET, 'secretsmanager:GetSecretValue'],
      [PARAMETER, 'ssm:GetParameter'],
    ]) {
      const part = readerPart(params({ mode: 'token', clusterName: '', tokenSource: source }), inputs);
      const read = statements(part).filter(
        (s) => !s.Action[0].startsWith('logs:') && !s.Action[0].startsWith('dynamodb:'),
      );
      expect(read).toEqual([{ Effect: 'Allow', Action: [action], Resource: [source] }]);
      expect((part?.functions.clusterReader as any)?.environment.CLUSTER_TOKEN_SOURCE).toBe(source);
    }
  });

  it('refuses params it cannot deploy, naming each', () => {
    expect(readerParamProblems(params({ mode: 'kubeconfig' }))).toEqual([
      'param clusterReader must be none, eks or token, got "kubeconfig"',
    ]);
    const problems = readerParamProblems(
      params({ mode: 'token', endpoint: 'http://x', ca: 'bm9wZQ==', tokenSource: 'x' }),
    );
    expect(problems.map((p) => p.split(' ')[1])).toEqual(['clusterEndpoint', 'clusterCa', 'clusterTokenSource']);
    expect(readerParamProblems(params({ clusterName: '' }))).toEqual([
      'param clusterName is required with clusterReader eks',
    ]);
  });
});

describe("the cluster reader's memory", () => {
  it("is what its measured peak RSS chooses by the functions' rule, and serverless.yml deploys it", () => {
    // 154.5 MB with a quarter to spare: 206 MB, in 64 MB steps 256.
    expect(readerMemoryFor(READER_MEASURED.peakRssMb)).toEqual({ memoryMb: 256, bound: 'peak RSS' });
    expect(readerMemorySetting()).toBe(readerMemoryFor(READER_MEASURED.peakRssMb).memoryMb);
  });

  it('holds the figures of the committed bench run (bench/results.json)', () => {
    const reader = (
      JSON.parse(readFileSync('bench/results.json', 'utf8')) as {
        reader: { rssMbPer1000Pods: number; rows: { pods: number; 'peak RSS MB': number }[] };
      }
    ).reader;
    const measured = reader.rows.find((row) => row.pods === READER_MEASURED.pods);
    expect(measured?.['peak RSS MB']).toBe(READER_MEASURED.peakRssMb);
    expect(reader.rssMbPer1000Pods).toBe(READER_MEASURED.rssMbPer1000Pods);
  });

  it('needs no more than the least setting for a small peak: no request CPU bounds it', () => {
    expect(readerMemoryFor(50)).toEqual({ memoryMb: 128, bound: 'minimum' });
    expect(readerMemoryFor(97)).toEqual({ memoryMb: 192, bound: 'peak RSS' });
  });

  it('says in serverless.yml what cluster the setting covers and where to read how to raise it', () => {
    const yml = readFileSync('serverless.yml', 'utf8');
    const comment = yml.slice(
      yml.lastIndexOf("# The cluster reader's memory", yml.indexOf('memorySize:')),
      yml.indexOf('memorySize:'),
    );
    expect(comment).toContain(`a cluster of ${READER_MEASURED.pods.toLocaleString('en-US')} pods`);
    expect(comment).toContain(`about ${Math.round(READER_MEASURED.rssMbPer1000Pods)} MB per 1,000 pods`);
    expect(comment).toContain('docs/performance.md');
  });
});
