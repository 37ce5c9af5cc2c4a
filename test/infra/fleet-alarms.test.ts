// A fleet's alarms: one per function whose Metrics Insights query returns a series per cluster, so
// each cluster is a contributor of its own (no alarm resource per cluster), on the dimension set
// the fleet's EMF lines carry; a single cluster's template has none.
import { describe, expect, it } from 'vitest';
import { plugins } from '../../functions/index.js';
import type { ServerlessInputs } from '../../infra/serverless/functions.js';
import { clusterFailuresQuery, serverlessAlarms } from '../../infra/serverless/observability.js';
import { EmfPublisher } from '../../lib/metrics/emf.js';

const quotaPlugin = plugins.find((plugin) => plugin.metadata.name === 'resource-quota');
if (!quotaPlugin) throw new Error('resource-quota is not registered');
const single: ServerlessInputs = { service: 'admission', stage: 'dev', auth: 'url-secret', provisionedConcurrency: 0 };
const fleet: ServerlessInputs = { ...single, fleet: new Map([['resource-quota', ['blue', 'green']]]) };

describe('per-cluster alarms of a fleet', () => {
  it('adds one multi-series alarm per function, grouped by cluster', () => {
    const alarms = serverlessAlarms([quotaPlugin], fleet) as Record<string, { Properties: any }>;
    const alarm = alarms.ResourceQuotaClusterFailuresAlarm?.Properties;
    expect(alarm?.AlarmName).toBe('admission-dev-resource-quota-cluster-5xx');
    expect(alarm?.Metrics).toHaveLength(1);
    expect(alarm?.Metrics[0].Expression).toBe(
      `SELECT SUM("Failures") FROM SCHEMA("ServerlessAdmission", service, cluster, plugin, phase) WHERE service = 'serverless-admission' AND plugin = 'resource-quota' GROUP BY cluster`,
    );
    expect(alarm?.Metrics[0].Period).toBe(60);
    expect(alarm?.Threshold).toBe(5);
    expect(alarm?.ComparisonOperator).toBe('GreaterThanThreshold');
  });

  it('queries the dimension set a fleet handler emits its failures under', () => {
    const publisher = new EmfPublisher('resource-quota', () => () => undefined, 'blue');
    const line = JSON.parse(
      publisher.line({
        phase: 'validate',
        operation: 'CREATE',
        statusCode: 500,
        dryRun: false,
        failure: 'store_unavailable',
        learningLost: false,
        seconds: 0.01,
        coldStart: false,
      }),
    );
    const directive = line._aws.CloudWatchMetrics[0];
    expect(directive.Metrics.map((m: { Name: string }) => m.Name)).toContain('Failures');
    // SCHEMA names every dimension of one set the line is published under, and the line has each.
    const schema = /SCHEMA\("([^"]+)", ([^)]+)\)/.exec(clusterFailuresQuery(quotaPlugin.metadata));
    expect(schema?.[1]).toBe(directive.Namespace);
    const dimensions = (schema?.[2] ?? '').split(', ');
    expect(directive.Dimensions.map((set: string[]) => [...set].sort().join())).toContain(
      [...dimensions].sort().join(),
    );
    for (const name of dimensions) expect(line[name], name).toBeDefined();
    expect(line.cluster).toBe('blue');
    expect(line.plugin).toBe('resource-quota');
  });

  it('a single cluster has no such alarm', () => {
    const alarms = serverlessAlarms([quotaPlugin], single);
    expect(Object.keys(alarms).some((key) => key.includes('Cluster'))).toBe(false);
  });
});
