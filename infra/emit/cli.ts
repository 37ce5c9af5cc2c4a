// `npm run emit`: the cluster-side configuration of every plugin (or of --plugins), as YAML on
// stdout; with --out, also the files the kube-apiserver needs to present its client certificate.
import type { KeyObject } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { plugins as registry } from '../../functions/index.js';
import type { AnyAdmissionPlugin } from '../../lib/admission/plugin.js';
import { DEFAULT_ADMISSION_CONFIG } from '../../lib/config/admission-configuration.js';
import { ConfigError } from '../../lib/config/errors.js';
import type { ConfiguredPlugin, PluginSet } from '../../lib/config/plugins.js';
import {
  activePlugins,
  ignoredLine,
  inactiveLine,
  inactiveSummary,
  loadPluginSet,
  selectionLine,
} from '../../lib/config/plugins.js';
import { emitNative } from '../native/emit.js';
import { isNativeOnly } from '../native/native-only.js';
import { certificateSubject, clusterClientFiles, DEFAULT_PKI_DIR, ensureClusterClient, pkiFiles } from '../pki/pki.js';
import { subjectAllowed } from '../../lib/http/caller-identity.js';
import { seedingCommand, seedingPlan } from '../sync/plan.js';
import { readKinds } from '../../lib/cluster/kinds.js';
import { readsCluster } from '../../lib/config/cluster-reader.js';
import { eksAccessEntryCommand, readerRbac } from './reader-rbac.js';
import { SEED_STATE_DOC } from '../../lib/state/never-seen.js';
import {
  apiserverAdmissionConfiguration,
  DEFAULT_KUBECONFIG_PATH,
  kubeconfigUserName,
  webhookKubeconfig,
} from './apiserver.js';
import { apiserverViolations, ruleViolations, validateSchema } from './checks.js';
import {
  clusterKeyFile,
  DEFAULT_URL_SECRET_FILE,
  DeploymentKeyError,
  ensureDeploymentKey,
  urlSecretFile,
  writeNewDeploymentKey,
} from './url-secret.js';
import { publicKeyText } from '../../lib/http/capability.js';
import type { FleetCluster } from '../../lib/config/fleet.js';
import { fleetCluster } from '../../lib/config/fleet.js';
import type { CallerAuthOption, EmitOptions, WebhookConfiguration } from './webhooks.js';
import {
  checkBaseUrl,
  EmitError,
  handlerOnlyExemptions,
  SYSTEM_NAMESPACES,
  webhookConfigurations,
} from './webhooks.js';

const USAGE = `Usage: npm run -s emit -- --base-url URL [options]
       npm run -s emit -- --auth url-secret --public-key

Prints one MutatingWebhookConfiguration and/or ValidatingWebhookConfiguration per plugin
(admissionregistration.k8s.io/v1, YAML documents on stdout; progress on stderr), named
serverless-admission-<plugin>, with webhooks <plugin>.mutate|validate|learn.serverless-admission.io
calling <URL>/<plugin>/mutate|validate|learn. The plugins are those the AdmissionConfiguration
makes active: exactly the ones it names, or the default-on set when it names none.

Options:
  --base-url URL            https://host[:port][/prefix] of the webhook host (required)
  --cluster NAME            a fleet's cluster: config/clusters/NAME.yaml, its key
                            .local/clusters/NAME/url-secret (created when missing), and URLs
                            <URL>/NAME/... that grant for that cluster only (docs/fleet.md);
                            mtls with --out: its client certificate .local/clusters/NAME/client.crt
                            and .key (issued by ${DEFAULT_PKI_DIR}/ca.crt for the first CN of its
                            allowedSubjects when missing; npm run pki -- --cluster NAME --rotate
                            renews it), or --client-cert, whose subject must be one it allows
  --plugins a,b             only these of the active plugins (naming an inactive one is an error)
  --auth MODE               mtls (default) or url-secret (EKS, GKE, AKS: each webhook's URL holds a
                            capability for that webhook alone, signed with the deployment key)
  --secret-file FILE        url-secret: the deployment key (default: URL_SECRET_FILE, else
                            ${DEFAULT_URL_SECRET_FILE}, which CALLER_AUTH=url-secret npm start reads
                            too; created there, 0600, when missing)
  --new-secret              url-secret: create a new deployment key in --secret-file (for rotation;
                            refuses to overwrite)
  --public-key              url-secret: print URL_CAPABILITY_KEY=<public key> (the deployment's
                            urlCapabilityKeys param) and nothing else; no --base-url needed
  --ca-bundle FILE          PEM of the CA that signs the webhook host's certificate (caBundle);
                            not needed for a publicly trusted certificate (API Gateway with ACM)
  --staged NAMESPACE        staged rollout: failurePolicy Ignore, only NAMESPACE
  --webhook-namespace NS    also exclude NS (where the webhook itself runs, if in the cluster)
  --served a,b              the plugins the deployment serves (its ServedPlugins output; npm run
                            -s outputs -- --emit passes it): a webhook for any other plugin is
                            refused, since the apiserver would call a function that is not there
  --no-match-conditions     drop matchConditions (clusters older than Kubernetes 1.28)
  --admission-config FILE   the AdmissionConfiguration the deployment serves: it decides which
                            plugins are active and the rules of those that follow it
                            (default: ADMISSION_CONFIG or ${DEFAULT_ADMISSION_CONFIG})
  --native                  first, native ValidatingAdmissionPolicies/MutatingAdmissionPolicies
                            for every plugin the cluster can run itself (then webhooks only
                            for the rest; --base-url only needed if some remain)
  --kubernetes-version X.Y  with --native: the cluster's version (1.30 or later)
  --out DIR                 also write DIR/webhooks.yaml (0600 in url-secret mode) and, in mtls
                            mode, the apiserver's DIR/admission-configuration.yaml and
                            DIR/kubeconfig.yaml (0600)
  --client-cert FILE        mtls: the apiserver's client certificate (default ${DEFAULT_PKI_DIR}/client.crt)
  --client-key FILE         mtls: its key (default ${DEFAULT_PKI_DIR}/client.key)
  --reader                  the deployment reads the cluster (also when CLUSTER_KUBECONFIG or
                            CLUSTER_READER is set): no learning webhooks, since no request teaches
  --reader-rbac             print the cluster reader's RBAC instead (no --base-url needed): a
                            ClusterRole with get, list and watch on exactly the kinds the active
                            plugins read, and its ClusterRoleBinding
  --reader-service-account NS/NAME
                            with --reader-rbac: also the ServiceAccount, bound to that ClusterRole
  --eks-cluster NAME        with --reader-rbac: bind the ClusterRole to the group
                            serverless-admission:readers and print the EKS access entry that
                            maps --eks-role-arn (the reading function's role) to it
  --eks-role-arn ARN        with --eks-cluster: the reading function's IAM role
  --kubeconfig-path PATH    where the apiserver will read the kubeconfig on each control-plane
                            node (default ${DEFAULT_KUBECONFIG_PATH});
                            goes into admission-configuration.yaml
  -h, --help                this text

Exit status: 0 done, 2 bad arguments, 1 anything else.
`;

export interface EmitIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  readonly plugins?: readonly AnyAdmissionPlugin[];
}

class UsageError extends Error {}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: false,
      options: {
        'base-url': { type: 'string' },
        cluster: { type: 'string' },
        plugins: { type: 'string' },
        served: { type: 'string' },
        auth: { type: 'string', default: 'mtls' },
        'secret-file': { type: 'string' },
        'new-secret': { type: 'boolean', default: false },
        'public-key': { type: 'boolean', default: false },
        'ca-bundle': { type: 'string' },
        staged: { type: 'string' },
        'webhook-namespace': { type: 'string' },
        'no-match-conditions': { type: 'boolean', default: false },
        'admission-config': { type: 'string' },
        out: { type: 'string' },
        'client-cert': { type: 'string' },
        'client-key': { type: 'string' },
        'kubeconfig-path': { type: 'string' },
        native: { type: 'boolean', default: false },
        reader: { type: 'boolean', default: false },
        'reader-rbac': { type: 'boolean', default: false },
        'reader-service-account': { type: 'string' },
        'eks-cluster': { type: 'string' },
        'eks-role-arn': { type: 'string' },
        'kubernetes-version': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function readFileArg(option: string, file: string): string {
  if (!existsSync(file)) throw new UsageError(`${option}: file ${file} does not exist`);
  return readFileSync(file, 'utf8');
}

/** --plugins, or every active plugin; an inactive one cannot answer, so naming it is an error. */
function selectPlugins(set: PluginSet, list: string | undefined, io: EmitIo): ConfiguredPlugin[] {
  if (list === undefined) {
    for (const line of inactiveSummary(set)) io.stderr(`left out: ${line}\n`);
    return activePlugins(set);
  }
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw new UsageError('--plugins needs at least one plugin name');
  const known = new Map(set.plugins.map((p) => [p.plugin.metadata.name, p]));
  const unknown = names.filter((n) => !known.has(n));
  if (unknown.length > 0)
    throw new UsageError(`--plugins: unknown ${unknown.join(', ')}; known: ${[...known.keys()].join(', ')}`);
  const chosen = [...new Set(names)].map((n) => known.get(n) as ConfiguredPlugin);
  const named = chosen.find((p) => p.inactive !== undefined);
  if (named !== undefined) throw new UsageError(`--plugins: ${inactiveLine(named)}`);
  return chosen;
}

function writePrivate(file: string, text: string): void {
  writeFileSync(file, text, { mode: 0o600 });
  chmodSync(file, 0o600);
}

export function toYamlDocuments(docs: readonly object[]): string {
  return docs.map((doc) => stringify(doc, { lineWidth: 0, aliasDuplicateObjects: false })).join('---\n');
}

/** The whole command, without process globals, so tests run it in-process. Returns the exit code. */
export async function emitCommand(argv: string[], io: EmitIo): Promise<number> {
  try {
    return await emit(argv, io);
  } catch (error) {
    if (error instanceof UsageError || error instanceof EmitError) {
      io.stderr(
        `emit: ${error.message}\n${error instanceof UsageError ? 'Run npm run emit -- --help for usage.\n' : ''}`,
      );
      return 2;
    }
    io.stderr(`emit: ${error instanceof ConfigError ? 'invalid configuration: ' : ''}${(error as Error).message}\n`);
    return 1;
  }
}

/**
 * --cluster NAME (a fleet, lib/config/fleet.ts): the cluster's AdmissionConfiguration and key
 * (created when missing), and its name in every URL and capability.
 */
function forCluster(values: Values): { values: Values; cluster?: FleetCluster } {
  const name = values.cluster;
  if (name === undefined || values.help) return { values };
  if (values['admission-config'] !== undefined)
    throw new UsageError(`--admission-config and --cluster both name a configuration: --cluster ${name} reads its own`);
  const cluster = fleetCluster(name);
  return {
    values: {
      ...values,
      'admission-config': cluster.configFile,
      // url-secret only: in mtls mode a --secret-file is refused, as for one cluster.
      ...(values.auth === 'url-secret' && { 'secret-file': values['secret-file'] ?? clusterKeyFile(name) }),
      reader: values.reader || cluster.settings.readerKubeconfig !== undefined,
    },
    cluster,
  };
}

async function emit(argv: string[], io: EmitIo): Promise<number> {
  const chosen = forCluster(parse(argv));
  let values = chosen.values;
  // --native: the policies the cluster runs itself come first; webhooks below only for the rest.
  if (values['kubernetes-version'] !== undefined && !values.native)
    throw new UsageError('--kubernetes-version is for --native');
  if (values.native && !values.help) {
    const version = values['kubernetes-version'];
    if (version === undefined) throw new UsageError('--native needs --kubernetes-version X.Y');
    const { webhooks } = emitNative(
      {
        kubernetesVersion: version,
        admissionConfig: values['admission-config'],
        plugins: values.plugins,
        webhookNamespace: values['webhook-namespace'],
        stagedNamespace: values.staged,
        out: values.out,
        baseUrl: values['base-url'],
      },
      io,
    );
    if (webhooks.length === 0) return 0;
    io.stdout('---\n');
    values = { ...values, plugins: webhooks.join(',') };
  }
  if (values['reader-rbac'] && !values.help) return emitReaderRbac(values, io);
  for (const option of ['reader-service-account', 'eks-cluster', 'eks-role-arn'] as const)
    if (values[option] !== undefined) throw new UsageError(`--${option} is for --reader-rbac`);
  const options = checkedOptions(values);
  if (options === 'help') {
    io.stdout(USAGE);
    return 0;
  }
  if (options === 'public-key') {
    io.stdout(`URL_CAPABILITY_KEY=${publicKeyText(deploymentKey(values, io))}\n`);
    return 0;
  }
  const { selected, configs, enforcement } = loadSelectedPlugins(options, io);
  const caBundle = readCaBundle(options.values['ca-bundle']);
  const client = clientIdentity(options, chosen.cluster, io);
  if (options.out !== undefined) mkdirSync(options.out, { recursive: true });
  const auth = resolveCallerAuth(options, io);
  const docs = checkedDocuments(
    options,
    selected,
    configs,
    enforcement,
    auth,
    caBundle,
    readsClusterOption(values, io),
  );
  writeOutputs(options, docs, selected, auth, client, io);
  noteMatchConditions(docs, io);
  if (readsClusterOption(values, io)) noteReader(selected, io);
  else noteSeeding(selected, io);
  return 0;
}

/** --reader, or the environment of a local reader (CLUSTER_KUBECONFIG) or a deployed one (CLUSTER_READER). */
function readsClusterOption(values: Values, io: EmitIo): boolean {
  return values.reader || readsCluster(io.env);
}

/** With a reader, nothing needs loading: say what it reads, and how to grant exactly that. */
function noteReader(selected: readonly AnyAdmissionPlugin[], io: EmitIo): void {
  const kinds = readKinds(selected.map((p) => p.metadata));
  if (kinds.length === 0) return;
  io.stderr(`the cluster reader keeps these plugins' state: it reads ${kinds.map((k) => k.name).join(', ')}\n`);
  io.stderr(
    '  its RBAC (get, list, watch on exactly these): npm run -s emit -- --reader-rbac --reader-service-account NS/NAME\n',
  );
}

/** --reader-rbac: the reader's ServiceAccount, ClusterRole and binding; for EKS, its access entry. */
function emitReaderRbac(values: Values, io: EmitIo): number {
  const account = values['reader-service-account'];
  let serviceAccount: { namespace: string; name: string } | undefined;
  if (account !== undefined) {
    const [namespace, name, ...rest] = account.split('/');
    if (
      rest.length > 0 ||
      !namespace ||
      !name ||
      !DNS_LABEL.test(namespace) ||
      !/^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/.test(name)
    )
      throw new UsageError(`--reader-service-account: ${JSON.stringify(account)} is not NAMESPACE/NAME`);
    serviceAccount = { namespace, name };
  }
  const eksCluster = values['eks-cluster'];
  const roleArn = values['eks-role-arn'];
  if ((eksCluster === undefined) !== (roleArn === undefined))
    throw new UsageError('--eks-cluster and --eks-role-arn go together');
  if (roleArn !== undefined && !/^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/.test(roleArn))
    throw new UsageError(`--eks-role-arn: ${JSON.stringify(roleArn)} is not an IAM role ARN`);
  if (serviceAccount === undefined && eksCluster === undefined)
    throw new UsageError(
      '--reader-rbac needs --reader-service-account NS/NAME or --eks-cluster NAME --eks-role-arn ARN',
    );
  const { selected } = loadSelectedPlugins({ values } as Options, io);
  const kinds = readKinds(selected.map((p) => p.metadata));
  if (kinds.length === 0) {
    io.stderr('none of the active plugins reads the cluster: no reader needed\n');
    return 0;
  }
  io.stdout(toYamlDocuments(readerRbac(kinds, { serviceAccount, eks: eksCluster !== undefined })));
  io.stderr(`the reader may get, list and watch: ${kinds.map((k) => k.name).join(', ')}\n`);
  if (eksCluster !== undefined && roleArn !== undefined) {
    io.stderr("EKS: map the reading function's role to the group bound above:\n");
    io.stderr(`  ${eksAccessEntryCommand(eksCluster, roleArn)}\n`);
  }
  return 0;
}

/**
 * Plugins that answer from learned state judge objects that existed before installation right only
 * once `npm run sync` loaded them: say exactly what to run, before anything is applied.
 */
function noteSeeding(selected: readonly AnyAdmissionPlugin[], io: EmitIo): void {
  const plan = seedingPlan(selected.map((p) => p.metadata));
  if (plan.resources.length === 0) return;
  const learners = [...plan.byPlugin.entries()].map(([plugin, kinds]) => `${plugin} (${kinds.join(', ')})`);
  io.stderr(
    `before you apply: ${learners.length === 1 ? 'this plugin answers from what it learns' : 'these plugins answer from what they learn'} of the cluster: ${learners.join('; ')}\n`,
  );
  io.stderr(`  load what already exists into the deployment's store (${SEED_STATE_DOC}):\n`);
  io.stderr(`  ${seedingCommand(plan)}\n`);
}

/**
 * matchConditions are Kubernetes 1.28+: an older apiserver drops the field and calls the webhook
 * for every request its rules match (the handler still checks, but a Fail webhook then covers
 * more). Say so where the operator reads the next steps.
 */
function noteMatchConditions(docs: readonly WebhookConfiguration[], io: EmitIo): void {
  const using = docs.flatMap((doc) =>
    (doc.webhooks ?? []).filter((w) => (w.matchConditions?.length ?? 0) > 0).map((w) => w.name),
  );
  if (using.length === 0) return;
  io.stderr(
    `note: ${using.length} webhook${using.length === 1 ? ' uses' : 's use'} matchConditions (Kubernetes 1.28+: ${using.join(', ')}); for an older cluster, emit with --no-match-conditions\n`,
  );
}

type Values = ReturnType<typeof parse>;

/** The command line, checked: everything below reads these, never argv. */
interface Options {
  readonly values: Values;
  readonly baseUrl: string;
  readonly mode: 'mtls' | 'url-secret';
  readonly out: string | undefined;
}

/** Checks the options against each other, before anything is loaded or written. */
function checkedOptions(values: Values): Options | 'help' | 'public-key' {
  if (values.help) return 'help';
  const mode = values.auth;
  if (mode !== 'mtls' && mode !== 'url-secret')
    throw new UsageError(`--auth must be mtls or url-secret, got ${JSON.stringify(mode)}`);
  if (mode === 'mtls' && (values['secret-file'] !== undefined || values['new-secret'] || values['public-key']))
    throw new UsageError('--secret-file, --new-secret and --public-key need --auth url-secret');
  if (values['public-key']) return 'public-key';
  if (values['base-url'] === undefined) throw new UsageError('--base-url is required');
  const baseUrl = checkBaseUrl(values['base-url']);
  if (mode === 'url-secret' && (values['client-cert'] !== undefined || values['client-key'] !== undefined)) {
    throw new UsageError('--client-cert/--client-key are for --auth mtls (url-secret callers present no certificate)');
  }
  for (const option of ['staged', 'webhook-namespace'] as const) {
    const ns = values[option];
    if (ns !== undefined && (!DNS_LABEL.test(ns) || ns.length > 63))
      throw new UsageError(`--${option}: ${JSON.stringify(ns)} is not a namespace name`);
  }
  if (values.staged !== undefined && (SYSTEM_NAMESPACES as readonly string[]).includes(values.staged)) {
    throw new UsageError(`--staged ${values.staged}: stage in a test namespace, not a system one`);
  }
  return { values, baseUrl, mode, out: values.out };
}

/**
 * --served: a webhook for a plugin the deployment does not serve would call a function that is
 * not there (a Fail webhook then refuses every request it matches), so emit refuses it, naming
 * the plugin and both ways out.
 */
function refuseUnserved(chosen: readonly ConfiguredPlugin[], served: string | undefined): void {
  if (served === undefined) return;
  const deployed = new Set(
    served
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
  );
  const missing = chosen.filter((p) => !deployed.has(p.plugin.metadata.name));
  if (missing.length === 0) return;
  const names = missing.map((p) => `${p.plugin.metadata.upstreamName} (${p.plugin.metadata.name})`).join(', ');
  throw new ConfigError(
    'AdmissionConfiguration',
    'plugins',
    `${names}: not served by this deployment (it serves ${[...deployed].join(', ') || 'no plugin'}): package and deploy with the same ADMISSION_CONFIG, or leave ${missing.length === 1 ? 'it' : 'them'} out with --plugins`,
  );
}

/** The AdmissionConfiguration the deployment serves decides which plugins can answer. */
function loadSelectedPlugins(
  { values }: Options,
  io: EmitIo,
): {
  selected: AnyAdmissionPlugin[];
  configs: Map<string, unknown>;
  enforcement: NonNullable<EmitOptions['enforcement']>;
} {
  const env = {
    ...io.env,
    ...(values['admission-config'] !== undefined && { ADMISSION_CONFIG: values['admission-config'] }),
  };
  const pluginSet = loadPluginSet(io.plugins ?? registry, env);
  io.stderr(`${selectionLine(pluginSet)}\n`);
  // With --native, a plugin served only natively is compiled, not ignored: no line for it.
  for (const name of pluginSet.ignored) if (!values.native || !isNativeOnly(name)) io.stderr(`${ignoredLine(name)}\n`);
  const chosen = selectPlugins(pluginSet, values.plugins, io);
  refuseUnserved(chosen, values.served);
  for (const line of handlerOnlyExemptions(chosen, !values['no-match-conditions'])) io.stderr(`${line}\n`);
  return {
    selected: chosen.map((p) => p.plugin),
    configs: new Map<string, unknown>(chosen.map((p) => [p.plugin.metadata.name, p.config])),
    enforcement: new Map(
      chosen.map(({ plugin, enforcement, exemptions }) => [plugin.metadata.name, { enforcement, exemptions }]),
    ),
  };
}

/** --ca-bundle as the caBundle field wants it (base64 PEM), or undefined. */
function readCaBundle(file: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  const pem = readFileArg('--ca-bundle', file);
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    throw new UsageError(`--ca-bundle: ${file} holds no PEM certificate`);
  return Buffer.from(pem, 'utf8').toString('base64');
}

/** mTLS client identity is only needed for the --out kubeconfig; checked before writing anything. */
function clientIdentity(
  { values, mode, out }: Options,
  cluster: FleetCluster | undefined,
  io: EmitIo,
): { certPem: string; keyPem: string } | undefined {
  if (out === undefined || mode !== 'mtls') return undefined;
  if (cluster !== undefined && values['client-cert'] === undefined && values['client-key'] === undefined)
    return clusterClientIdentity(cluster, io);
  const clientFiles = pkiFiles(DEFAULT_PKI_DIR);
  const clientCertFile = values['client-cert'] ?? clientFiles.clientCert;
  const clientKeyFile = values['client-key'] ?? clientFiles.clientKey;
  const hint =
    values['client-cert'] === undefined ? ' (run npm run pki first, or pass --client-cert/--client-key)' : '';
  if (!existsSync(clientCertFile) || !existsSync(clientKeyFile))
    throw new UsageError(`client certificate ${clientCertFile} / key ${clientKeyFile} not found${hint}`);
  const client = { certPem: readFileSync(clientCertFile, 'utf8'), keyPem: readFileSync(clientKeyFile, 'utf8') };
  if (!client.certPem.includes('-----BEGIN CERTIFICATE-----'))
    throw new UsageError(`${clientCertFile} holds no PEM certificate`);
  if (!/-----BEGIN (RSA |EC )?PRIVATE KEY-----/.test(client.keyPem))
    throw new UsageError(`${clientKeyFile} holds no PEM private key`);
  if (cluster !== undefined) refuseOtherSubject(cluster, clientCertFile, client.certPem);
  return client;
}

/**
 * A fleet's cluster (mtls): its own client certificate, issued on first use by the local CA for
 * its first allowed CN, so that the server lets it in for this cluster, and for no other.
 */
function clusterClientIdentity(cluster: FleetCluster, io: EmitIo): { certPem: string; keyPem: string } {
  const files = clusterClientFiles(cluster.name);
  let client: ReturnType<typeof ensureClusterClient>;
  try {
    client = ensureClusterClient(cluster.name, cluster.settings.allowedSubjects);
  } catch (error) {
    throw new ConfigError(`cluster ${cluster.name}`, 'allowedSubjects', (error as Error).message);
  }
  if (client.created)
    io.stderr(
      `created the client certificate of cluster ${cluster.name} (${certificateSubject(client.certPem)}): ${files.cert}, ${files.key} (0600)\n`,
    );
  refuseOtherSubject(cluster, files.cert, client.certPem);
  return client;
}

/** A certificate the server would refuse for this cluster (403) is never written into its kubeconfig. */
function refuseOtherSubject(cluster: FleetCluster, file: string, certPem: string): void {
  const subject = certificateSubject(certPem);
  if (subjectAllowed(cluster.settings.allowedSubjects, subject)) return;
  throw new ConfigError(
    `cluster ${cluster.name}`,
    'allowedSubjects',
    `${file} is issued to ${subject}, which ${cluster.settingsFile ?? `config/clusters/${cluster.name}.settings.yaml`} does not allow (${cluster.settings.allowedSubjects.join('; ') || 'none'}): the server would refuse it with 403. Renew it for an allowed subject (npm run pki -- --cluster ${cluster.name} --rotate) or allow its subject`,
  );
}

/** The deployment key: --secret-file, else URL_SECRET_FILE, else the default; created (0600) when missing. */
function deploymentKey(values: Values, io: EmitIo): KeyObject {
  const file = values['secret-file'] ?? urlSecretFile(io.env);
  try {
    if (values['new-secret']) {
      const key = writeNewDeploymentKey(file);
      io.stderr(`created a new deployment key in ${file} (0600): keep it secret, it makes every webhook's URL\n`);
      return key;
    }
    const { key, created } = ensureDeploymentKey(file);
    if (created)
      io.stderr(`created a deployment key in ${file} (0600): keep it secret, it makes every webhook's URL\n`);
    return key;
  } catch (error) {
    if (error instanceof DeploymentKeyError) throw new UsageError(error.message);
    throw error;
  }
}

/** How the apiserver proves itself: mTLS, or a capability per webhook signed with the deployment key. */
function resolveCallerAuth({ values, mode }: Options, io: EmitIo): CallerAuthOption {
  if (mode === 'mtls') return { mode: 'mtls' };
  const key = deploymentKey(values, io);
  const publicKey = publicKeyText(key);
  io.stderr(`url-secret: each URL grants its one webhook; the deployment holds the public key only:\n`);
  io.stderr(
    `  npx sls deploy --stage STAGE --param="callerAuth=url-secret" --param="urlCapabilityKeys=${publicKey}"\n`,
  );
  io.stderr(`  while rotating, give both keys: --param="urlCapabilityKeys=OLD,${publicKey}"\n`);
  return { mode: 'url-secret', key };
}

function checkedDocuments(
  { values, baseUrl }: Options,
  selected: readonly AnyAdmissionPlugin[],
  configs: ReadonlyMap<string, unknown>,
  enforcement: NonNullable<EmitOptions['enforcement']>,
  auth: CallerAuthOption,
  caBundle: string | undefined,
  reads: boolean,
): WebhookConfiguration[] {
  const docs = webhookConfigurations(selected, {
    baseUrl,
    auth,
    caBundle,
    stagedNamespace: values.staged,
    webhookNamespace: values['webhook-namespace'],
    matchConditions: !values['no-match-conditions'],
    configs,
    enforcement,
    readsCluster: reads,
    ...(values.cluster !== undefined && { cluster: values.cluster }),
  });
  check(docs, selected);
  return docs;
}

/** The documents on stdout; with --out, webhooks.yaml and (mTLS) the apiserver's two files. */
function writeOutputs(
  { values, baseUrl, out }: Options,
  docs: readonly WebhookConfiguration[],
  selected: readonly AnyAdmissionPlugin[],
  auth: CallerAuthOption,
  client: { certPem: string; keyPem: string } | undefined,
  io: EmitIo,
): void {
  const yaml = `# serverless-admission webhook configurations (npm run emit); ${auth.mode === 'url-secret' ? "each URL holds its webhook's capability" : 'mTLS'}\n${toYamlDocuments(docs)}`;
  io.stdout(yaml);
  io.stderr(
    `${docs.length} configuration(s) for ${selected.map((p) => p.metadata.name).join(', ')}${values.staged ? ` (staged in ${values.staged})` : ''}\n`,
  );
  if (out === undefined) return;
  const webhooksFile = join(out, 'webhooks.yaml');
  if (auth.mode === 'url-secret') writePrivate(webhooksFile, yaml);
  else writeFileSync(webhooksFile, yaml);
  io.stderr(`wrote ${webhooksFile}\n`);
  if (client === undefined) {
    io.stderr(
      'url-secret mode: no kubeconfig or AdmissionConfiguration (the apiserver presents no client certificate)\n',
    );
    return;
  }
  const kubeconfigFile = join(out, 'kubeconfig.yaml');
  const kubeConfigPath = values['kubeconfig-path'] ?? DEFAULT_KUBECONFIG_PATH;
  writePrivate(
    kubeconfigFile,
    stringify(webhookKubeconfig(baseUrl, client), { lineWidth: 0, aliasDuplicateObjects: false }),
  );
  writeFileSync(
    join(out, 'admission-configuration.yaml'),
    stringify(apiserverAdmissionConfiguration(kubeConfigPath), { lineWidth: 0, aliasDuplicateObjects: false }),
  );
  io.stderr(
    `wrote ${kubeconfigFile} (user ${kubeconfigUserName(baseUrl)}, 0600) and ${join(out, 'admission-configuration.yaml')} (kubeConfigFile ${kubeConfigPath})\n`,
  );
  io.stderr(`next, on every control-plane node:\n`);
  io.stderr(`  copy ${kubeconfigFile} to ${kubeConfigPath} (0600, readable by the apiserver)\n`);
  io.stderr(
    `  copy ${join(out, 'admission-configuration.yaml')} beside it and start kube-apiserver with --admission-control-config-file=<that file>\n`,
  );
  io.stderr(
    `  (an existing --admission-control-config-file: merge its ValidatingAdmissionWebhook and MutatingAdmissionWebhook entries instead)\n`,
  );
}

/** Refuses to print what the apiserver would reject or what breaks our rules: a bug, exit 1. */
function check(docs: readonly WebhookConfiguration[], selected: readonly AnyAdmissionPlugin[]): void {
  for (const doc of docs) {
    try {
      validateSchema(doc);
    } catch (error) {
      throw new Error(
        `${doc.kind} ${doc.metadata?.name} fails the admissionregistration.k8s.io/v1 schema: ${(error as Error).message}`,
      );
    }
  }
  // What `kubectl apply` would refuse, in the apiserver's words: never printed.
  const refused = docs.flatMap((doc) =>
    apiserverViolations(doc).map((problem) => `${doc.kind} ${doc.metadata?.name}: ${problem}`),
  );
  if (refused.length > 0) throw new Error(`the apiserver would refuse the configuration:\n  ${refused.join('\n  ')}`);
  const problems = ruleViolations(
    docs,
    selected.map((p) => p.metadata.name),
  );
  if (problems.length > 0) throw new Error(`emitted configuration breaks our rules:\n  ${problems.join('\n  ')}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const code = await emitCommand(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
  });
  process.exitCode = code;
}
