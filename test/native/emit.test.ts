// `npm run emit -- --native --kubernetes-version X.Y`, run in-process: which plugins become
// policies on which version, what stays a webhook and why, and the invariants that make switching
// safe: every object is ours by name and label, nothing it prints collides with a webhook
// configuration's (kind, name), every binding follows its policy, and every policy loads into the
// engines as the apiserver would create it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { plugins as registry } from '../../functions/index.js';
import { emitCommand } from '../../infra/emit/cli.js';
import { policyResourceRuleViolations } from '../../infra/emit/apiserver-validation.js';
import { nativeOnlyPlugins } from '../../infra/native/native-only.js';
import type { NativeObject } from '../../infra/native/objects.js';
import { ENVIRONMENT_VERSIONS } from '../../lib/cel/cel-env.js';
import type { CapturedRun } from '../support/captured.js';
import { captured } from '../support/captured.js';
import { everyPluginActiveConfiguration } from '../support/every-plugin-active.js';
import { NativeCluster, useAuthorizer } from './support/proof.js';

// The policies that ask the authorizer compile where an apiserver's is installed.
useAuthorizer(() => false);

let configuration: { file: string; remove: () => void };
beforeAll(() => {
  configuration = everyPluginActiveConfiguration();
});
afterAll(() => configuration.remove());

const emit = (argv: string[]): Promise<CapturedRun> =>
  captured((output) => emitCommand(argv, { ...output, env: { ADMISSION_CONFIG: configuration.file } }));

type Doc = Record<string, any>;
const documents = (yaml: string): Doc[] => parseAllDocuments(yaml).map((d) => d.toJS() as Doc);
const POLICY_KINDS = [
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionPolicyBinding',
];
const WEBHOOK_KINDS = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];
const BASE = ['--base-url', 'https://admission.example.com'];

describe('without --native', () => {
  it('prints webhook configurations only, as before', async () => {
    const run = await emit(BASE);
    expect(run.code).toBe(0);
    expect(documents(run.stdout).every((d) => WEBHOOK_KINDS.includes(d.kind))).toBe(true);
    expect(run.stderr).not.toMatch(/^native: /m);
  });
});

describe.each(ENVIRONMENT_VERSIONS)('--native --kubernetes-version %s', (version) => {
  let run: CapturedRun;
  let docs: Doc[];
  beforeAll(async () => {
    run = await emit([...BASE, '--native', '--kubernetes-version', version]);
    docs = documents(run.stdout);
  });

  it('succeeds, with one line per active plugin: native or webhook, and why', () => {
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stderr.split('\n').filter((l) => /^(native|webhook): /.test(l));
    for (const line of lines) expect(line).toMatch(/^(native|webhook): \S.* \([a-z0-9-]+\): \S/);
    expect(lines.some((l) => l.startsWith('native: DenyServiceExternalIPs (deny-service-external-ips)'))).toBe(true);
    expect(lines.some((l) => l.startsWith('webhook: EventRateLimit (event-rate-limit): '))).toBe(true);
  });

  it("prints no policy whose rules kubectl apply would refuse (the apiserver's rule checks)", () => {
    const policies = docs.filter((d) => d.kind === 'ValidatingAdmissionPolicy' || d.kind === 'MutatingAdmissionPolicy');
    expect(policies.length).toBeGreaterThan(0);
    for (const policy of policies) expect(policyResourceRuleViolations(policy), policy.metadata.name).toEqual([]);
  });

  it('prints the policies first, then webhooks only for the plugins that stay webhooks', () => {
    const kinds = docs.map((d) => d.kind);
    const firstWebhook = kinds.findIndex((k) => WEBHOOK_KINDS.includes(k));
    expect(kinds.slice(0, firstWebhook).every((k) => POLICY_KINDS.includes(k))).toBe(true);
    expect(kinds.slice(firstWebhook).every((k) => WEBHOOK_KINDS.includes(k))).toBe(true);
    const nativePlugins = new Set(
      docs.filter((d) => POLICY_KINDS.includes(d.kind)).map((d) => d.metadata.labels['app.kubernetes.io/component']),
    );
    const webhookPlugins = new Set(
      docs.filter((d) => WEBHOOK_KINDS.includes(d.kind)).map((d) => d.metadata.labels['app.kubernetes.io/component']),
    );
    expect([...nativePlugins].filter((p) => webhookPlugins.has(p))).toEqual([]);
    for (const p of nativePlugins) expect(run.stderr).toMatch(new RegExp(`^native: .* \\(${p}\\): `, 'm'));
    for (const p of webhookPlugins) expect(run.stderr).toMatch(new RegExp(`^webhook: .* \\(${p}\\): `, 'm'));
  });

  it('names and labels every object as ours, each (kind, name) once, never a webhook configuration', () => {
    const seen = new Set<string>();
    for (const doc of docs) {
      const key = `${doc.kind}/${doc.metadata.name}`;
      expect(seen.has(key), key).toBe(false);
      seen.add(key);
      expect(doc.apiVersion).toBe('admissionregistration.k8s.io/v1');
      expect(doc.metadata.name).toMatch(/^serverless-admission-[a-z0-9-]+$/);
      expect(doc.metadata.labels).toMatchObject({
        'app.kubernetes.io/name': 'serverless-admission',
        'app.kubernetes.io/managed-by': 'serverless-admission-emit',
      });
      if (POLICY_KINDS.includes(doc.kind)) {
        expect(doc.metadata.labels['serverless-admission.io/served-as']).toBe('native');
        expect(
          doc.metadata.name.startsWith(`serverless-admission-${doc.metadata.labels['app.kubernetes.io/component']}`),
        ).toBe(true);
      }
    }
  });

  it('follows every policy with its binding, which names it', () => {
    docs.forEach((doc, i) => {
      if (!doc.kind.endsWith('Binding') || !POLICY_KINDS.includes(doc.kind)) return;
      expect(docs[i - 1]?.kind).toBe(doc.kind.replace(/Binding$/, ''));
      expect(doc.spec.policyName).toBe(docs[i - 1].metadata.name);
    });
  });

  it('creates every policy as the apiserver would (the engines load them, every expression compiled)', () => {
    const policies = docs.filter((d) => POLICY_KINDS.includes(d.kind)) as NativeObject[];
    expect(policies.length).toBeGreaterThan(0);
    expect(() => new NativeCluster(policies, version)).not.toThrow();
  });

  it('binds with the entry enforcement and excludes the system namespaces, as the webhooks do', () => {
    const includes = new Set(
      [...registry, ...nativeOnlyPlugins]
        .filter((p) => p.metadata.systemNamespaces === 'include')
        .map((p) => p.metadata.name),
    );
    for (const doc of docs.filter((d) => d.kind.endsWith('AdmissionPolicyBinding'))) {
      // PodSecurity's warn and audit modes are bindings of their own (Warn, Audit); every other one denies.
      const mode = /-pod-security-(warn|audit)$/.exec(doc.metadata.name)?.[1];
      const expected = mode === 'warn' ? ['Warn'] : mode === 'audit' ? ['Audit'] : ['Deny'];
      if (doc.kind === 'ValidatingAdmissionPolicyBinding') expect(doc.spec.validationActions).toEqual(expected);
      const excluded = doc.spec.matchResources?.namespaceSelector?.matchExpressions ?? [];
      if (includes.has(doc.metadata.labels['app.kubernetes.io/component'])) expect(excluded).toEqual([]);
      else
        expect(excluded).toContainEqual({
          key: 'kubernetes.io/metadata.name',
          operator: 'NotIn',
          values: ['kube-system', 'kube-node-lease'],
        });
    }
  });
});

describe('arguments', () => {
  it('refuses a version before 1.30', async () => {
    const run = await emit([...BASE, '--native', '--kubernetes-version', '1.29']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('GA in 1.30');
  });

  it('needs --kubernetes-version with --native, and --native with it', async () => {
    expect((await emit([...BASE, '--native'])).code).toBe(2);
    expect((await emit([...BASE, '--kubernetes-version', '1.31'])).code).toBe(2);
  });

  it('needs --base-url only when some plugin stays a webhook, and names those', async () => {
    const some = await emit(['--native', '--kubernetes-version', '1.36']);
    expect(some.code).toBe(2);
    expect(some.stderr).toMatch(/--base-url is required: .*event-rate-limit/);
    const onlyNative = await emit([
      '--native',
      '--kubernetes-version',
      '1.36',
      '--plugins',
      'deny-service-external-ips',
    ]);
    expect(onlyNative.code, onlyNative.stderr).toBe(0);
    expect(documents(onlyNative.stdout).map((d) => d.kind)).toEqual([
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]);
  });

  it('takes a patch version and compiles a newer minor for the newest environment it knows', async () => {
    const patch = await emit(['--native', '--kubernetes-version', 'v1.31.4', '--plugins', 'deny-service-external-ips']);
    expect(patch.code, patch.stderr).toBe(0);
    const newer = await emit(['--native', '--kubernetes-version', '1.37', '--plugins', 'deny-service-external-ips']);
    expect(newer.code, newer.stderr).toBe(0);
    expect(newer.stderr).toContain('newer than 1.36');
  });

  it('prints the switching sequence: apply first, then delete the webhook configurations by name', async () => {
    const run = await emit(['--native', '--kubernetes-version', '1.36', '--plugins', 'deny-service-external-ips']);
    expect(run.stderr).toContain(
      'kubectl delete mutatingwebhookconfiguration,validatingwebhookconfiguration serverless-admission-deny-service-external-ips --ignore-not-found',
    );
  });
});

describe('plugins only an apiserver can serve', () => {
  const emitWith = (file: string, argv: string[]): Promise<CapturedRun> =>
    captured((output) => emitCommand(argv, { ...output, env: { ADMISSION_CONFIG: file } }));
  const EXAMPLE = 'config/examples/native-policies.yaml';

  it('are compiled from their entries with --native, and need no --base-url', async () => {
    const run = await emitWith(EXAMPLE, [
      '--native',
      '--kubernetes-version',
      '1.30',
      '--plugins',
      'certificate-approval,certificate-signing,cluster-trust-bundle-attest,ingress-admission',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(documents(run.stdout).map((d) => `${d.kind}/${d.metadata.name}`)).toEqual(
      ['certificate-approval', 'certificate-signing', 'cluster-trust-bundle-attest', 'ingress-admission'].flatMap(
        (p) => [
          `ValidatingAdmissionPolicy/serverless-admission-${p}`,
          `ValidatingAdmissionPolicyBinding/serverless-admission-${p}`,
        ],
      ),
    );
    expect(run.stderr).toContain('native: CertificateApproval (certificate-approval): ValidatingAdmissionPolicy');
  });

  it('are never webhooks: without --native their entries are ignored', async () => {
    const run = await emitWith(EXAMPLE, BASE);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toContain('certificate-approval');
    expect(run.stderr).toContain(
      'CertificateApproval: served only as a native policy: npm run emit -- --native --kubernetes-version X.Y (1.30 or later)',
    );
  });
});

describe("the apiserver's rule checks on a policy", () => {
  it("refuses '*' beside '*/*', as for a webhook's rules", () => {
    const policy = {
      spec: {
        matchConstraints: {
          resourceRules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*', '*/*'] }],
        },
      },
    };
    expect(policyResourceRuleViolations(policy)).toEqual([
      `spec.matchConstraints.resourceRules[0].resources: Invalid value: ["*","*/*"]: if '*/*' is present, must not specify other resources`,
    ]);
  });
});
