// PodSecurity natively (Kubernetes 1.30+): every pass and fail pod of upstream's fixtures, for every
// check, level and policy version, and the configuration's defaults and exemptions, through the
// webhook plugin and through the compiled policies in the project's VAP engine: the same decision,
// refusal, warnings and audit annotations (test/native/support/pod-security.ts says how each compares).
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/pod-security/plugin.js';
import { ENVIRONMENT_VERSIONS } from '../../lib/cel/cel-env.js';
import { planPlugin } from '../../infra/native/plan.js';
import type { ReviewInput } from '../support/review.js';
import { runPhase } from '../support/review.js';
import type { PodSecurityCase } from '../support/cases/pod-security.js';
import {
  configurationCases,
  fixtureCases,
  POD,
  POD_SECURITY_CONFIGURATION,
  REVISIONS,
} from '../support/cases/pod-security.js';
import { NativeCluster, configured, namespaceState, nativeObjectsOf } from './support/proof.js';
import { nativeAnswer, webhookAnswer } from './support/pod-security.js';

const entry = configured(plugin, POD_SECURITY_CONFIGURATION);
const cluster = new NativeCluster(nativeObjectsOf(entry, '1.30'), '1.30');

const KINDS: Record<string, { group: string; kind: string }> = {
  pods: { group: '', kind: 'Pod' },
  deployments: { group: 'apps', kind: 'Deployment' },
};

function inputOf(c: PodSecurityCase, namespace: string): ReviewInput {
  const kind = typeof c.object.kind === 'string' ? c.object.kind : KINDS[c.resource.resource].kind;
  return {
    object: { ...c.object, metadata: { ...c.object.metadata, namespace } },
    namespace,
    kind: { group: c.resource.group, version: 'v1', kind },
    resource: { group: c.resource.group, version: 'v1', resource: c.resource.resource },
    userInfo: { username: c.username ?? 'tester', groups: ['system:authenticated'] },
  };
}

async function bothAnswers(c: PodSecurityCase, input?: ReviewInput) {
  const namespace = c.namespace ?? 'ns';
  const state = namespaceState([{ name: namespace, labels: c.labels }]);
  const request = input ?? inputOf(c, namespace);
  const webhook = await runPhase(plugin, 'validate', request, entry.config, state);
  const native = await cluster.validate(request, state);
  const n = native.wire.response!;
  return {
    webhook: webhookAnswer(webhook.wire.response!),
    native: nativeAnswer({ ...n, annotations: n.auditAnnotations ?? {} }),
    code: [webhook.wire.response?.status?.code, n.status?.code],
  };
}

const FIXTURE_CASES = fixtureCases();

describe('upstream fixtures: every check, level and revision', () => {
  it('are all here: each revision of a check, and latest', () => {
    expect(REVISIONS).toEqual([0, 8, 19, 22, 23, 25, 27, 29, 31, 32, 34, 35, 36]);
    expect(FIXTURE_CASES.length).toBe(5_304);
  });

  // Batched by level and version: one test per policy version of a level.
  const groups = new Map<string, PodSecurityCase[]>();
  for (const c of FIXTURE_CASES) {
    const key = c.name.slice(0, c.name.indexOf(' '));
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  it.each([...groups.keys()])('%s', async (key) => {
    let refused = 0;
    for (const c of groups.get(key)!) {
      const { webhook, native, code } = await bothAnswers(c);
      expect(native, c.name).toEqual(webhook);
      if (!webhook.allowed) {
        refused++;
        expect(code[1], c.name).toBe(code[0]);
      }
    }
    expect(refused).toBeGreaterThan(0);
  });
});

describe('the configuration: defaults, exemptions, labels, workloads', () => {
  it.each(configurationCases())('$name', async (c) => {
    const { webhook, native } = await bothAnswers(c);
    expect(native).toEqual(webhook);
  });
});

describe('every environment compiles the policies', () => {
  it.each(ENVIRONMENT_VERSIONS)('%s', (version) => {
    expect(() => new NativeCluster(nativeObjectsOf(entry, version), version)).not.toThrow();
  });
});

describe('emit, beside the built-in PodSecurity', () => {
  it('warns, for each kind of exemption configured, that the built-in still refuses in labelled namespaces', () => {
    const warnings = planPlugin(entry, '1.30').warnings ?? [];
    expect(warnings).toHaveLength(3);
    expect(warnings[0]).toMatch(
      /^warning: PodSecurity \(pod-security\): exemptions\.usernames \(exempt-user\): the built-in/,
    );
    expect(warnings[1]).toContain('exemptions.runtimeClasses (exempt-runtime)');
    expect(warnings[2]).toContain('exemptions.namespaces (exempt-ns)');
    for (const w of warnings) expect(w).toContain('pod-security.kubernetes.io/enforce=baseline or restricted');
  });

  it('says nothing of defaults alone, which take effect where the built-in admits (unlabelled namespaces)', () => {
    const defaultsOnly = configured(plugin, { ...POD_SECURITY_CONFIGURATION, exemptions: {} });
    expect(planPlugin(defaultsOnly, '1.30').warnings).toBeUndefined();
  });
});

describe('a pod with 100 containers', () => {
  const wide = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'wide' },
    spec: {
      hostNetwork: true,
      containers: Array.from({ length: 100 }, (_, i) => ({
        name: `c${i}`,
        image: 'i',
        ports: [{ containerPort: 1000 + i, hostPort: 1000 + i }],
        securityContext: {
          privileged: true,
          capabilities: { add: ['NET_ADMIN', 'SYS_TIME', `CAP_${i}`] },
          seLinuxOptions: { type: `spc_t_${i}`, user: 'u' },
          procMount: 'Unmasked',
          runAsUser: 0,
        },
        livenessProbe: { httpGet: { host: `h${i}.example`, port: 80 } },
      })),
      volumes: Array.from({ length: 100 }, (_, i) => ({ name: `v${i}`, hostPath: { path: `/v${i}` } })),
    },
  };

  it.each([
    ['enforce', { 'pod-security.kubernetes.io/enforce': 'restricted' }],
    ['warn', { 'pod-security.kubernetes.io/enforce': 'privileged', 'pod-security.kubernetes.io/warn': 'restricted' }],
  ])('is judged within the cost limits (%s)', async (_mode, labels) => {
    const { webhook, native } = await bothAnswers({ name: 'wide', labels, object: wide, resource: POD });
    expect(JSON.stringify(native)).not.toMatch(/cost|budget/);
    expect(native.allowed).toBe(webhook.allowed);
    // The webhook's details are longer than a policy message may be (5 KiB): the policy says so.
    if (!webhook.allowed) {
      expect(Buffer.byteLength(webhook.refusal ?? '')).toBeGreaterThan(5 * 1024);
      expect(native.refusal).toBe('violates PodSecurity (the details exceed the 5 KiB a policy message may hold)');
    } else expect(native.warnings).toHaveLength(1);
    expect(native.auditViolations).toBeDefined();
  });
});
