// `npm run check-config`: what `npm start`, `emit`, `npm run package` and every Lambda's cold start
// would say about the AdmissionConfiguration, without serving. Exit 0 when every plugin accepts
// its configuration; 1 on the first invalid field or unknown entry, named with a suggestion.
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { clusterEnv, fleetCluster } from '../lib/config/fleet.js';
import { plugins as registry } from '../functions/index.js';
import type { AnyAdmissionPlugin } from '../lib/admission/plugin.js';
import { DEFAULT_ADMISSION_CONFIG } from '../lib/config/admission-configuration.js';
import { hasExemptions } from '../lib/config/enforcement.js';
import { ConfigError } from '../lib/config/errors.js';
import { ignoredLine, inactiveLine, loadPluginSet, selectionLine, unnamedPlugins } from '../lib/config/plugins.js';

const USAGE = `Usage: npm run check-config [-- FILE | --cluster NAME]

Loads the AdmissionConfiguration (FILE, else ADMISSION_CONFIG, else ${DEFAULT_ADMISSION_CONFIG}) and
hands every plugin its entry, as a start would. A file that names plugins serves exactly those;
one that names none serves the default-on set. Prints which rule applied, then one line per plugin:

  ok  PodNodeSelector (configured)       served, with its entry
  ok  AlwaysPullImages (defaults)        served on upstream's defaults
  --  ImagePolicyWebhook (...) is inactive: off by default, it needs its configuration: ...
  --  ServiceAccount: not served by this project, entry ignored
  --  not named: ...                     the plugins a file with names leaves out, in one line

--cluster NAME checks a fleet's cluster instead: config/clusters/NAME.yaml and its settings file
(docs/fleet.md).

Exits 1 on the first invalid configuration, naming the plugin, the field and the closest known
field; 2 on bad arguments.
`;

export interface CheckConfigIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: NodeJS.ProcessEnv;
  readonly plugins?: readonly AnyAdmissionPlugin[];
}

export function checkConfigCommand(argv: string[], io: CheckConfigIo): number {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { help: { type: 'boolean', short: 'h' }, cluster: { type: 'string' } },
    });
  } catch (error) {
    io.stderr(`check-config: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  if (positionals.length > 1 || (values.cluster !== undefined && positionals.length > 0)) {
    io.stderr(USAGE);
    return 2;
  }
  try {
    // --cluster NAME: a fleet's cluster, its AdmissionConfiguration and its settings, checked.
    const cluster = values.cluster === undefined ? undefined : fleetCluster(values.cluster);
    const env = cluster
      ? clusterEnv(cluster, io.env)
      : positionals[0]
        ? { ...io.env, ADMISSION_CONFIG: positionals[0] }
        : io.env;
    if (cluster)
      io.stdout(
        `cluster ${cluster.name}: ${cluster.configFile}${cluster.settingsFile ? `, ${cluster.settingsFile}` : ''}\n`,
      );
    const set = loadPluginSet(io.plugins ?? registry, env);
    io.stdout(`${selectionLine(set)}\n`);
    for (const configured of set.plugins) {
      const { upstreamName } = configured.plugin.metadata;
      if (configured.notNamed) continue;
      if (configured.inactive !== undefined) io.stdout(`--  ${inactiveLine(configured)}\n`);
      else {
        const notes = [
          configured.hasEntry ? 'configured' : 'defaults',
          ...(configured.enforcement !== 'Deny' ? [`enforcement: ${configured.enforcement}`] : []),
          ...(hasExemptions(configured.exemptions) ? ['with exemptions'] : []),
        ];
        io.stdout(`ok  ${upstreamName} (${notes.join(', ')})\n`);
      }
    }
    for (const name of set.ignored) io.stdout(`--  ${ignoredLine(name)}\n`);
    const unnamed = unnamedPlugins(set).map((p) => p.plugin.metadata.upstreamName);
    if (unnamed.length > 0) io.stdout(`--  not named: ${unnamed.join(', ')}\n`);
    return 0;
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr(`invalid configuration: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = checkConfigCommand(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
  });
}
