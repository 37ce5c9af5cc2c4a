// The alarms and the dashboard of serverless.yml, derived from the plugin registry like the
// function list: per function, the 5xx rate, the p99 latency of each webhook against a fraction of
// its timeoutSeconds, throttles, and (for plugins that keep state) store failures; one dashboard
// with a row per plugin; in a fleet, an alarm per function whose contributors are the clusters. The metrics are lib/metrics' EMF ones (namespace ServerlessAdmission,
// dimension sets {service, plugin, phase} and {service, plugin, decision}) and Lambda's own (AWS/Lambda, FunctionName).
import type { AnyAdmissionPlugin, PluginMetadata } from '../../lib/admission/plugin.js';
import { EMF_CLUSTER_DIMENSIONS, EMF_METRIC, EMF_NAMESPACE, EMF_SERVICE } from '../../lib/metrics/emf.js';
import type { ServerlessInputs } from './functions.js';
import { endpointsOf, functionKey, needsStateTable } from './functions.js';
import type { Endpoint } from '../../lib/http/webhook-path.js';
import { LEARNING_TIMEOUT_SECONDS } from '../../lib/admission/plugin.js';

export interface ObservabilityInputs {
  /** An SNS topic ARN for alarm and OK notifications; '' keeps the alarms without actions. */
  readonly alarmTopicArn: string;
  /** The p99 latency alarm fires above this fraction of the webhook's timeoutSeconds. */
  readonly latencyAlarmFraction: number;
  /** The 5xx alarm fires above this percentage of requests answered 5xx. */
  readonly failureRateAlarmPercent: number;
  /** Lambda active tracing (X-Ray); off by default. */
  readonly tracing: boolean;
  /** Refused callers (403) of one plugin in 5 minutes above which its alarm fires. */
  readonly refusedCallersAlarmThreshold: number;
  /** A fleet: 5xx answers to one cluster in a minute above which that cluster's contributor fires. */
  readonly clusterFailuresAlarmThreshold: number;
}

export const OBSERVABILITY_DEFAULTS: ObservabilityInputs = {
  alarmTopicArn: '',
  latencyAlarmFraction: 0.5,
  failureRateAlarmPercent: 1,
  tracing: false,
  refusedCallersAlarmThreshold: 20,
  clusterFailuresAlarmThreshold: 5,
};

export function observabilityInputs(inputs: ServerlessInputs): ObservabilityInputs {
  return { ...OBSERVABILITY_DEFAULTS, ...inputs.observability };
}

const lambdaLogicalId = (metadata: PluginMetadata) => `${functionKey(metadata.name)}LambdaFunction`;
const phaseKey = (phase: Endpoint) => functionKey(phase);

/** The webhook's timeoutSeconds: the learning webhook's is LEARNING_TIMEOUT_SECONDS. */
function timeoutSeconds(metadata: PluginMetadata, phase: Endpoint): number {
  if (phase === 'learn') return LEARNING_TIMEOUT_SECONDS;
  const webhook = phase === 'mutate' ? metadata.mutating : metadata.validating;
  if (webhook === undefined) throw new Error(`${metadata.name} has no ${phase} webhook`);
  return webhook.timeoutSeconds;
}

function emfMetric(metadata: PluginMetadata, phase: Endpoint, name: string) {
  return {
    Namespace: EMF_NAMESPACE,
    MetricName: name,
    Dimensions: [
      { Name: 'service', Value: EMF_SERVICE },
      { Name: 'plugin', Value: metadata.name },
      { Name: 'phase', Value: phase },
    ],
  };
}

function lambdaMetric(metadata: PluginMetadata, name: string) {
  return {
    Namespace: 'AWS/Lambda',
    MetricName: name,
    Dimensions: [{ Name: 'FunctionName', Value: { Ref: lambdaLogicalId(metadata) } }],
  };
}

/** Alarm and recovery go to the topic when one is given; without one the alarms only show. */
function alarm(name: string, description: string, properties: Record<string, unknown>, topicArn: string) {
  return {
    Type: 'AWS::CloudWatch::Alarm',
    Properties: {
      AlarmName: name,
      AlarmDescription: description,
      TreatMissingData: 'notBreaching',
      ...properties,
      ...(topicArn !== '' && { AlarmActions: [topicArn], OKActions: [topicArn] }),
    },
  };
}

/** Sum of one EMF metric over a plugin's phases, as metric-math queries (the last one returns). */
function summed(metadata: PluginMetadata, metric: string, id: string, period: number) {
  const parts = endpointsOf(metadata).map((phase) => ({
    Id: `${id}_${phase}`,
    MetricStat: { Metric: emfMetric(metadata, phase, metric), Period: period, Stat: 'Sum' },
    ReturnData: false,
  }));
  return { parts, expression: parts.map((p) => `FILL(${p.Id}, 0)`).join(' + ') };
}

/** The 5xx answers of one plugin's webhooks, a series per cluster (CloudWatch Metrics Insights). */
export function clusterFailuresQuery(metadata: PluginMetadata): string {
  const schema = `SCHEMA("${EMF_NAMESPACE}", ${EMF_CLUSTER_DIMENSIONS[0]?.join(', ')})`;
  return `SELECT SUM("${EMF_METRIC.failures}") FROM ${schema} WHERE service = '${EMF_SERVICE}' AND plugin = '${metadata.name}' GROUP BY cluster`;
}

function pluginAlarms(metadata: PluginMetadata, inputs: ServerlessInputs): Record<string, unknown> {
  const o = observabilityInputs(inputs);
  const prefix = `${inputs.service}-${inputs.stage}-${metadata.name}`;
  const key = functionKey(metadata.name);
  const alarms: Record<string, unknown> = {};

  // 5xx: our answers that let failurePolicy decide, plus invocations Lambda itself failed (a
  // crash or the function timeout, which never reach our metrics), over all requests.
  const failures = summed(metadata, EMF_METRIC.failures, 'failures', 60);
  const requests = summed(metadata, EMF_METRIC.requests, 'requests', 60);
  alarms[`${key}FailureRateAlarm`] = alarm(
    `${prefix}-5xx-rate`,
    `${metadata.name}: more than ${o.failureRateAlarmPercent}% of requests answered 5xx (store unavailable, deadline, bug) or failed in Lambda. What to do: docs/operate.md#alarms.`,
    {
      Metrics: [
        ...failures.parts,
        ...requests.parts,
        {
          Id: 'lambda_errors',
          MetricStat: { Metric: lambdaMetric(metadata, 'Errors'), Period: 60, Stat: 'Sum' },
          ReturnData: false,
        },
        { Id: 'failed', Expression: `${failures.expression} + FILL(lambda_errors, 0)`, ReturnData: false },
        { Id: 'total', Expression: `${requests.expression} + FILL(lambda_errors, 0)`, ReturnData: false },
        { Id: 'rate', Expression: 'IF(total > 0, 100 * failed / total, 0)', Label: '5xx %', ReturnData: true },
      ],
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: o.failureRateAlarmPercent,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
    },
    o.alarmTopicArn,
  );

  // p99 of each webhook against its own timeout: the apiserver gives up at timeoutSeconds.
  for (const phase of endpointsOf(metadata)) {
    const thresholdMs = Math.round(timeoutSeconds(metadata, phase) * 1000 * o.latencyAlarmFraction);
    alarms[`${key}${phaseKey(phase)}LatencyAlarm`] = alarm(
      `${prefix}-${phase}-p99-latency`,
      `${metadata.name} ${phase}: p99 latency above ${thresholdMs} ms (${o.latencyAlarmFraction} of timeoutSeconds ${timeoutSeconds(metadata, phase)}). What to do: docs/operate.md#alarms.`,
      {
        ...emfMetric(metadata, phase, EMF_METRIC.latency),
        ExtendedStatistic: 'p99',
        Period: 60,
        Unit: 'Milliseconds',
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: thresholdMs,
        EvaluationPeriods: 5,
        DatapointsToAlarm: 3,
      },
      o.alarmTopicArn,
    );
  }

  alarms[`${key}ThrottlesAlarm`] = alarm(
    `${prefix}-throttles`,
    `${metadata.name}: Lambda throttled invocations (account or reserved concurrency exhausted); the apiserver saw 429s. What to do: docs/operate.md#alarms.`,
    {
      ...lambdaMetric(metadata, 'Throttles'),
      Statistic: 'Sum',
      Period: 60,
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
      EvaluationPeriods: 1,
    },
    o.alarmTopicArn,
  );

  // Callers refused (403): a wrong or missing capability, or a certificate of another subject. The
  // apiserver never sends these, so a count above the threshold is a probe or a flood (or a
  // cluster still calling with a retired key).
  alarms[`${key}RefusedCallersAlarm`] = alarm(
    `${prefix}-refused-callers`,
    `${metadata.name}: more than ${o.refusedCallersAlarmThreshold} callers refused (403) in 5 minutes: someone is calling without a valid capability or certificate. What to do: docs/operate.md#alarms.`,
    {
      Namespace: EMF_NAMESPACE,
      MetricName: EMF_METRIC.requests,
      Dimensions: [
        { Name: 'service', Value: EMF_SERVICE },
        { Name: 'plugin', Value: metadata.name },
        { Name: 'decision', Value: 'malformed_caller_refused' },
      ],
      Statistic: 'Sum',
      Period: 300,
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: o.refusedCallersAlarmThreshold,
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    },
    o.alarmTopicArn,
  );

  // A fleet: one alarm per function whose Metrics Insights query returns a series per cluster
  // (each cluster a contributor of its own), so a cluster's failures show under its name without a
  // resource per cluster, and a cluster added later is watched without a change of the template.
  if (inputs.fleet !== undefined) {
    alarms[`${key}ClusterFailuresAlarm`] = alarm(
      `${prefix}-cluster-5xx`,
      `${metadata.name}: one cluster's requests answered 5xx more than ${o.clusterFailuresAlarmThreshold} times a minute, in 3 of 5 minutes; the contributor names the cluster. What to do: docs/operate.md#alarms.`,
      {
        Metrics: [
          {
            Id: 'cluster_failures',
            Expression: clusterFailuresQuery(metadata),
            Period: 60,
            Label: '5xx by cluster',
            ReturnData: true,
          },
        ],
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: o.clusterFailuresAlarmThreshold,
        EvaluationPeriods: 5,
        DatapointsToAlarm: 3,
      },
      o.alarmTopicArn,
    );
  }

  if (needsStateTable(metadata)) {
    const store = summed(metadata, EMF_METRIC.storeFailures, 'store', 60);
    alarms[`${key}StoreFailuresAlarm`] = alarm(
      `${prefix}-store-failures`,
      `${metadata.name}: the DynamoDB state store failed (requests answered 5xx or observations lost). What to do: docs/operate.md#alarms.`,
      {
        Metrics: [
          ...store.parts,
          { Id: 'store_failures', Expression: store.expression, Label: 'store failures', ReturnData: true },
        ],
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        EvaluationPeriods: 3,
        DatapointsToAlarm: 2,
      },
      o.alarmTopicArn,
    );
  }
  return alarms;
}

export function serverlessAlarms(
  plugins: readonly AnyAdmissionPlugin[],
  inputs: ServerlessInputs,
): Record<string, unknown> {
  return Object.assign({}, ...plugins.map((plugin) => pluginAlarms(plugin.metadata, inputs)));
}

export const DASHBOARD_LOGICAL_ID = 'AdmissionDashboard';
/** Fn::Sub's pseudo parameter for the stack's region, filled in when the dashboard is created. */
const STACK_REGION = `\${AWS::Region}`;

/** One row per plugin: answers by decision, latency against the timeout, failures, the store. */
function dashboardRow(metadata: PluginMetadata, y: number, inputs: ServerlessInputs): Record<string, unknown>[] {
  const o = observabilityInputs(inputs);
  // Fn::Sub turns `${<Function>LambdaFunction}` into the deployed function's name.
  const fn = `\${${lambdaLogicalId(metadata)}}`;
  const emf = (metric: string, phase: Endpoint, stat: string, label: string, extra: Record<string, unknown> = {}) => [
    EMF_NAMESPACE,
    metric,
    'service',
    EMF_SERVICE,
    'plugin',
    metadata.name,
    'phase',
    phase,
    { stat, label, ...extra },
  ];
  const search = `SEARCH('{${EMF_NAMESPACE},service,plugin,decision} MetricName="${EMF_METRIC.requests}" plugin="${metadata.name}"', 'Sum', 60)`;
  const widget = (x: number, width: number, title: string, properties: Record<string, unknown>) => ({
    type: 'metric',
    x,
    y,
    width,
    height: 6,
    properties: {
      title: `${metadata.name}: ${title}`,
      region: STACK_REGION,
      view: 'timeSeries',
      period: 60,
      ...properties,
    },
  });
  const phases = endpointsOf(metadata);
  const minTimeout = Math.min(...phases.map((p) => timeoutSeconds(metadata, p)));
  const row = [
    widget(0, 6, 'requests by decision', {
      stacked: true,
      metrics: [[{ expression: search, id: 'decisions', label: '' }]],
    }),
    widget(6, 6, 'latency (ms)', {
      metrics: phases.flatMap((p) => [
        emf(EMF_METRIC.latency, p, 'p50', `${p} p50`),
        emf(EMF_METRIC.latency, p, 'p99', `${p} p99`),
      ]),
      annotations: {
        horizontal: [
          {
            label: `alarm: ${o.latencyAlarmFraction} of timeoutSeconds`,
            value: minTimeout * 1000 * o.latencyAlarmFraction,
          },
        ],
      },
    }),
    widget(12, 6, 'failures, throttles, cold starts', {
      metrics: [
        ...phases.map((p) => emf(EMF_METRIC.failures, p, 'Sum', `${p} 5xx`)),
        ...phases.map((p) => emf(EMF_METRIC.coldStarts, p, 'Sum', `${p} cold starts`)),
        ['AWS/Lambda', 'Throttles', 'FunctionName', fn, { stat: 'Sum', label: 'throttles' }],
        ['AWS/Lambda', 'Errors', 'FunctionName', fn, { stat: 'Sum', label: 'Lambda errors' }],
      ],
    }),
  ];
  if (needsStateTable(metadata)) {
    row.push(
      widget(18, 6, 'state store', {
        metrics: phases.flatMap((p) => [
          emf(EMF_METRIC.storeCalls, p, 'Sum', `${p} calls`),
          emf(EMF_METRIC.storeFailures, p, 'Sum', `${p} failures`),
          emf(EMF_METRIC.learningLost, p, 'Sum', `${p} learning lost`),
          emf(EMF_METRIC.storeLatency, p, 'p99', `${p} call p99 ms`, { yAxis: 'right' }),
        ]),
      }),
    );
  }
  return row;
}

export function dashboardBody(
  plugins: readonly AnyAdmissionPlugin[],
  inputs: ServerlessInputs,
): Record<string, unknown> {
  const header = {
    type: 'text',
    x: 0,
    y: 0,
    width: 24,
    height: 2,
    properties: {
      markdown:
        `# ${inputs.service} (${inputs.stage})\nOne row per admission plugin. Metrics: namespace ${EMF_NAMESPACE} (EMF), ` +
        'AWS/Lambda. What each one means and what to do: docs/operate.md.',
    },
  };
  return { widgets: [header, ...plugins.flatMap((plugin, i) => dashboardRow(plugin.metadata, 2 + i * 6, inputs))] };
}

export function serverlessDashboard(
  plugins: readonly AnyAdmissionPlugin[],
  inputs: ServerlessInputs,
): Record<string, unknown> {
  return {
    [DASHBOARD_LOGICAL_ID]: {
      Type: 'AWS::CloudWatch::Dashboard',
      Properties: {
        DashboardName: `${inputs.service}-${inputs.stage}`,
        // Fn::Sub fills in ${AWS::Region} and the functions' names; the body has no other ${...}.
        DashboardBody: { 'Fn::Sub': JSON.stringify(dashboardBody(plugins, inputs)) },
      },
    },
  };
}
