// An AdmissionConfiguration under which every registered plugin is active: the entries of the
// shipped examples (config/examples/*.yaml), with ImagePolicyWebhook's backend kubeconfig and
// ValidatingAdmissionPolicy's policies given by absolute path, since the file is written elsewhere,
// and a bare entry for every other plugin (a file that names plugins serves exactly those).
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { plugins as registry } from '../../functions/index.js';

const EXAMPLES = resolve(import.meta.dirname, '../../config/examples');

function exampleEntries(): Record<string, unknown>[] {
  const entries = new Map<string, Record<string, unknown>>();
  for (const file of readdirSync(EXAMPLES)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    const doc = parse(readFileSync(join(EXAMPLES, file), 'utf8')) as { plugins?: Record<string, unknown>[] };
    for (const entry of doc.plugins ?? []) {
      const configuration =
        typeof entry.path === 'string' ? parse(readFileSync(join(EXAMPLES, entry.path), 'utf8')) : entry.configuration;
      entries.set(entry.name as string, { name: entry.name, ...(configuration !== undefined && { configuration }) });
    }
  }
  entries.set('ImagePolicyWebhook', {
    name: 'ImagePolicyWebhook',
    configuration: {
      imagePolicy: {
        kubeConfigFile: join(EXAMPLES, 'image-policy-backend.kubeconfig'),
        allowTTL: 50,
        denyTTL: 50,
        retryBackoff: 500,
        defaultAllow: true,
      },
    },
  });
  entries.set('ValidatingAdmissionPolicy', {
    name: 'ValidatingAdmissionPolicy',
    configuration: {
      paths: [
        join(EXAMPLES, 'validating-admission-policy/demo-policy.yaml'),
        join(EXAMPLES, 'validating-admission-policy/replica-limit.yaml'),
      ],
    },
  });
  for (const { metadata } of registry)
    if (!entries.has(metadata.upstreamName)) entries.set(metadata.upstreamName, { name: metadata.upstreamName });
  return [...entries.values()];
}

export function everyPluginActiveConfiguration(): { readonly file: string; readonly remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'every-plugin-'));
  const file = join(dir, 'admission.yaml');
  writeFileSync(
    file,
    stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AdmissionConfiguration', plugins: exampleEntries() }),
  );
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
