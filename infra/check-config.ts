// `npm run check-config`: what `npm start` and every Lambda's cold start would say about the
// AdmissionConfiguration, without serving. Exit 0 when every plugin accepts its configuration.
import { parseArgs } from 'node:util';
import { plugins } from '../functions/index.js';
import { configurePlugin, DEFAULT_ADMISSION_CONFIG, loadAdmissionConfiguration } from '../lib/config/admission-configuration.js';
import { ConfigError } from '../lib/config/errors.js';

const USAGE = `Usage: npm run check-config [-- FILE]

Loads the AdmissionConfiguration (FILE, else ADMISSION_CONFIG, else ${DEFAULT_ADMISSION_CONFIG}) and
hands every plugin its entry, as a start would. Prints one line per plugin; exits 1 on the first
invalid configuration, naming the plugin and the field.
`;

function main(): number {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length > 1) {
    process.stderr.write(USAGE);
    return 2;
  }
  const env = positionals[0] ? { ...process.env, ADMISSION_CONFIG: positionals[0] } : process.env;
  try {
    const configuration = loadAdmissionConfiguration(env);
    process.stdout.write(`${configuration.source.file}\n`);
    const known = new Set(plugins.map((p) => p.metadata.upstreamName));
    for (const plugin of plugins) {
      configurePlugin(plugin, configuration);
      const entry = configuration.entries.has(plugin.metadata.upstreamName) ? 'configured' : 'defaults';
      process.stdout.write(`ok  ${plugin.metadata.upstreamName} (${entry})\n`);
    }
    for (const name of configuration.entries.keys()) {
      if (!known.has(name)) process.stdout.write(`--  ${name}: not served by this project, entry ignored (as the apiserver ignores entries of disabled plugins)\n`);
    }
    return 0;
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`invalid configuration: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

process.exitCode = main();
