// An AdmissionConfiguration under which every registered plugin is active: the entries the
// inactive-by-default plugins need (ImagePolicyWebhook's backend, ValidatingAdmissionPolicy's
// policies), taken from the shipped examples by absolute path.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';

export function everyPluginActiveConfiguration(): { readonly file: string; readonly remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'every-plugin-'));
  const examples = resolve(import.meta.dirname, '../../config/examples');
  const file = join(dir, 'admission.yaml');
  writeFileSync(
    file,
    stringify({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AdmissionConfiguration',
      plugins: [
        {
          name: 'ImagePolicyWebhook',
          configuration: { imagePolicy: { kubeConfigFile: join(examples, 'image-policy-backend.kubeconfig'), allowTTL: 50, denyTTL: 50, retryBackoff: 500, defaultAllow: true } },
        },
        {
          name: 'ValidatingAdmissionPolicy',
          configuration: { paths: [join(examples, 'validating-admission-policy/demo-policy.yaml'), join(examples, 'validating-admission-policy/replica-limit.yaml')] },
        },
      ],
    }),
  );
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
