// Resolved by osls for `${file(./infra/serverless/functions.cjs):...}` in serverless.yml: loads
// the TypeScript plugin registry in-process (tsx's scoped import, no network, no build step) and
// returns the per-plugin functions, IAM roles, alarms and dashboard, so serverless.yml's function
// list is the registry, always. It also refuses parameter combinations that would deploy an open endpoint.
'use strict';

const path = require('node:path');
const { pathToFileURL } = require('node:url');

let modules;

/** A configuration mistake: the message is the whole story, no stack trace in osls's output. */
function paramError(message) {
  const error = new Error(message);
  error.stack = message;
  return error;
}

/** The registry and the generator, imported once per process (osls calls us once per reference). */
function loadModules() {
  modules ??= (async () => {
    // tsx's CommonJS build of this API mis-resolves its own loader (4.23); its ESM build works.
    const { tsImport } = await import('tsx/esm/api');
    const parentURL = pathToFileURL(__filename).href;
    const { plugins } = await tsImport(pathToFileURL(path.join(__dirname, '../../functions/index.ts')).href, parentURL);
    const { serverlessPart } = await tsImport(pathToFileURL(path.join(__dirname, 'functions.ts')).href, parentURL);
    const { activePlugins } = await tsImport(
      pathToFileURL(path.join(__dirname, '../../lib/config/plugins.ts')).href,
      parentURL,
    );
    const { loadFleet, clusterThrottle } = await tsImport(
      pathToFileURL(path.join(__dirname, '../../lib/config/fleet.ts')).href,
      parentURL,
    );
    const { packagePluginSet, writePackagedConfiguration, packageFleet, writePackagedFleet } = await tsImport(
      pathToFileURL(path.join(__dirname, 'packaged-config.ts')).href,
      parentURL,
    );
    const { throttlingProblems } = await tsImport(pathToFileURL(path.join(__dirname, 'throttling.ts')).href, parentURL);
    const { clusterStageProblems } = await tsImport(
      pathToFileURL(path.join(__dirname, 'cluster-stages.ts')).href,
      parentURL,
    );
    const { readerPart, readerParamProblems } = await tsImport(
      pathToFileURL(path.join(__dirname, 'cluster-reader.ts')).href,
      parentURL,
    );
    return {
      plugins,
      serverlessPart,
      activePlugins,
      packagePluginSet,
      writePackagedConfiguration,
      loadFleet,
      clusterThrottle,
      packageFleet,
      writePackagedFleet,
      throttlingProblems,
      clusterStageProblems,
      readerPart,
      readerParamProblems,
    };
  })().catch((error) => {
    modules = undefined;
    throw error;
  });
  return modules;
}

/** Alarms, their SNS topic and X-Ray: refused when they would make an alarm that never fires. */
async function observabilityParams(param) {
  const alarmTopicArn = await param('alarmTopicArn');
  if (alarmTopicArn !== '' && !/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]+$/.test(alarmTopicArn)) {
    throw paramError(`param alarmTopicArn must be an SNS topic ARN or empty, got ${JSON.stringify(alarmTopicArn)}`);
  }
  const latencyAlarmFraction = Number(await param('latencyAlarmFraction'));
  if (!(latencyAlarmFraction > 0 && latencyAlarmFraction <= 1))
    throw paramError('param latencyAlarmFraction must be a number in (0, 1]: a fraction of timeoutSeconds');
  const failureRateAlarmPercent = Number(await param('failureRateAlarmPercent'));
  if (!(failureRateAlarmPercent > 0 && failureRateAlarmPercent < 100))
    throw paramError('param failureRateAlarmPercent must be a number in (0, 100)');
  const tracing = await param('tracing');
  if (tracing !== 'true' && tracing !== 'false')
    throw paramError(`param tracing must be true or false, got ${JSON.stringify(tracing)}`);
  const refusedCallersAlarmThreshold = Number(await param('refusedCallersAlarmThreshold'));
  if (!(Number.isInteger(refusedCallersAlarmThreshold) && refusedCallersAlarmThreshold >= 0))
    throw paramError('param refusedCallersAlarmThreshold must be a whole number >= 0');
  return {
    alarmTopicArn,
    latencyAlarmFraction,
    failureRateAlarmPercent,
    tracing: tracing === 'true',
    refusedCallersAlarmThreshold,
  };
}

module.exports = async function serverlessAdmissionFunctions({ resolveVariable }) {
  const param = async (name) => String((await resolveVariable(`param:${name}`)) ?? '');
  const service = String(await resolveVariable('self:service'));
  const stage = String(await resolveVariable('sls:stage'));
  const auth = await param('callerAuth');
  if (auth !== 'mtls' && auth !== 'url-secret')
    throw paramError(`param callerAuth must be mtls or url-secret, got ${JSON.stringify(auth)}`);

  const domainName = await param('domainName');
  if (auth === 'mtls') {
    // Without the custom domain's truststore nothing checks the client certificate, and the
    // execute-api endpoint would bypass it anyway: refuse rather than deploy an open webhook.
    const missing = [];
    for (const name of ['domainName', 'certificateArn', 'truststoreUri'])
      if ((await param(name)) === '') missing.push(name);
    if (missing.length > 0)
      throw paramError(
        `callerAuth mtls needs the params ${missing.join(', ')} (stage ${stage}); see docs/deploy-aws.md`,
      );
  }
  const {
    plugins,
    serverlessPart,
    activePlugins,
    packagePluginSet,
    writePackagedConfiguration,
    loadFleet,
    clusterThrottle,
    packageFleet,
    writePackagedFleet,
    throttlingProblems,
    clusterStageProblems,
    readerPart,
    readerParamProblems,
  } = await loadModules();
  // A fleet when param clustersDir holds a cluster's file (lib/config/fleet.ts): its clusters'
  // keys are in their settings, not in param urlCapabilityKeys.
  const clusters = loadFleet(await param('clustersDir'));
  if (auth === 'url-secret' && clusters.length === 0 && (await param('urlCapabilityKeys')) === '') {
    throw paramError(
      'callerAuth url-secret needs the param urlCapabilityKeys (printed by npm run -s emit -- --auth url-secret --public-key)',
    );
  }

  const provisionedConcurrency = Number(await param('provisionedConcurrency')) || 0;
  const observability = await observabilityParams(param);
  const throttling = {};
  for (const name of [
    'apiThrottleRate',
    'apiThrottleBurst',
    'webhookThrottleRate',
    'webhookThrottleBurst',
    'reservedConcurrency',
  ])
    throttling[name] = Number(await param(name));
  const deploymentLogicalId = `ApiGatewayDeployment${await resolveVariable('sls:instanceId')}`;
  // A fleet: each cluster's stage, throttled at its share (infra/serverless/cluster-stages.ts).
  const clusterThrottles = clusters.map((c) => ({ name: c.name, ...clusterThrottle(c.settings) }));
  const problems = [
    ...throttlingProblems(throttling, clusterThrottles),
    ...clusterStageProblems(
      clusters.map((c) => c.name),
      stage,
    ),
  ];
  if (problems.length > 0) throw paramError(problems.join('; '));
  // The cluster reader (infra/serverless/cluster-reader.ts): none keeps the learning webhooks.
  const reader = {
    mode: await param('clusterReader'),
    endpoint: await param('clusterEndpoint'),
    ca: await param('clusterCa'),
    clusterName: await param('clusterName'),
    tokenSource: await param('clusterTokenSource'),
  };
  const readerProblems = readerParamProblems(reader);
  if (clusters.length > 0 && reader.mode !== 'none')
    readerProblems.push(
      'param clusterReader reads one cluster: a packaged fleet keeps the learning webhooks (clusterReader none)',
    );
  if (readerProblems.length > 0) throw paramError(readerProblems.join('; '));
  // Only plugins that can answer under the AdmissionConfiguration the functions carry are
  // packaged, as npm start serves and emit registers them; a bad file fails the package.
  // What they read is parsed now, once, into the JSON file every function starts from
  // (infra/serverless/packaged-config.ts). A fleet: the union of the plugins its clusters enable,
  // each function with the package of the clusters it serves.
  let active;
  let packagedConfigFile = '';
  let fleet;
  if (clusters.length > 0) {
    const packagedFleet = packageFleet(plugins, clusters, auth);
    writePackagedFleet(packagedFleet);
    active = packagedFleet.plugins;
    fleet = packagedFleet.clustersOf;
  } else {
    const admissionConfig = await param('admissionConfig');
    const { set, packaged } = packagePluginSet(plugins, admissionConfig);
    writePackagedFleet(undefined);
    packagedConfigFile = writePackagedConfiguration(packaged);
    active = activePlugins(set).map((p) => p.plugin);
  }
  const part = serverlessPart(active, {
    service,
    stage,
    auth,
    provisionedConcurrency,
    observability,
    throttling,
    deploymentLogicalId,
    ...(fleet && { fleet, clusters: clusterThrottles }),
  });
  const readerFunctions = readerPart(reader, { service, stage, alarmTopicArn: observability.alarmTopicArn });
  const functions = { ...part.functions, ...readerFunctions?.functions };
  const resources = {
    ...part.resources,
    Resources: { ...part.resources.Resources, ...readerFunctions?.Resources },
    ...(fleet && {
      Outputs: {
        ServedClusters: {
          Description: 'A fleet: each cluster and the plugins it is served (cluster:plugin plugin;...).',
          Value: clusters
            .map((c) => {
              const served = active.filter((p) => fleet.get(p.metadata.name).includes(c.name));
              return `${c.name}:${served.map((p) => p.metadata.name).join(' ')}`;
            })
            .join(';'),
        },
      },
    }),
  };
  // mTLS only holds if the custom domain is the only way in; url-secret without a domain of its
  // own is served on the execute-api endpoint.
  return {
    functions,
    resources,
    packagedConfigFile,
    disableDefaultEndpoint: auth === 'mtls' || domainName !== '',
    // The ServedPlugins output: emit refuses a webhook for any other plugin (--served). In a
    // fleet, every plugin some cluster enables; the ServedClusters output says which has which.
    servedPlugins: active.map((p) => p.metadata.name).join(','),
    // The WebhookBaseUrl output's path on the execute-api name: the deployment's stage; none in a
    // fleet, whose clusters' stages are their URLs' first segment (emit --cluster puts it there).
    executeApiBasePath: fleet ? '' : `/${stage}`,

    // The functions' environment: with a reader, no request teaches (lib/config/cluster-reader.ts).
    clusterReaderMode: reader.mode === '' ? 'none' : reader.mode,
  };
};
