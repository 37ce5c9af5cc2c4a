// PodSecurity admission, through the deployed handler over DynamoDB Local (namespace labels are
// learned from the plugin's own Namespace reviews), with upstream's exact strings. Ported from
// staging/src/k8s.io/pod-security-admission/admission/admission_test.go (TestValidatePod,
// TestValidatePodController, TestValidateNamespace, TestExemptNamespaceWarning, isSignificantPodUpdate)
// and admission/api/validation/validation_test.go for the configuration.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import plugin from '../../functions/pod-security/plugin.js';
import type { PodSecurityConfig } from '../../functions/pod-security/config.js';
import { parsePodSecurityConfiguration } from '../../functions/pod-security/config.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { configurePlugin, loadAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import { configErrorOf } from '../support/config-error.js';
import type { TestStore } from '../support/dynamodb.js';
import { lambdaFor, namespaceReview, testStore } from '../support/dynamodb.js';
import type { ReviewInput } from '../support/review.js';

let store: TestStore;
beforeAll(async () => {
  store = await testStore('pod-security');
});
afterAll(() => store.close());

const configOf = (
  defaults: Record<string, string> = {},
  exemptions: Record<string, string[]> = {},
): PodSecurityConfig =>
  parsePodSecurityConfiguration({
    apiVersion: 'pod-security.admission.config.k8s.io/v1',
    kind: 'PodSecurityConfiguration',
    defaults,
    exemptions,
  });

let counter = 0;
const uniqueNamespace = (prefix: string) => `${prefix}-${++counter}`;

async function learnNamespace(config: PodSecurityConfig, name: string, labels: Record<string, string>) {
  const result = await lambdaFor(plugin, store, config)('validate', namespaceReview('CREATE', name, { labels }));
  expect(result.review!.response!.allowed).toBe(true);
}

/** A pod that violates restricted (no securityContext at all) but passes baseline. */
const plainPod = (namespace: string, name = 'p'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace },
  spec: { containers: [{ name: 'c', image: 'i' }] },
});

/** A pod that passes restricted. */
const restrictedPod = (namespace: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'good', namespace },
  spec: {
    securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
    containers: [
      { name: 'c', image: 'i', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } },
    ],
  },
});

const RESTRICTED_DETAIL =
  'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
  'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
  'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ' +
  'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

async function validate(config: PodSecurityConfig, input: ReviewInput) {
  const result = await lambdaFor(plugin, store, config)('validate', input);
  expect(result.statusCode).toBe(200);
  return result.review!.response!;
}

describe('configuration (PodSecurityConfiguration v1, v1beta1)', () => {
  it('reads defaults and exemptions, defaulting to privileged:latest', () => {
    const config = parsePodSecurityConfiguration({
      apiVersion: 'pod-security.admission.config.k8s.io/v1beta1',
      kind: 'PodSecurityConfiguration',
      defaults: { enforce: 'baseline', 'enforce-version': 'v1.30', warn: 'restricted' },
      exemptions: { usernames: ['admin'], runtimeClasses: ['kata'], namespaces: ['kube-system'] },
    });
    expect(config.defaults.enforce).toEqual({ level: 'baseline', version: { latest: false, minor: 30 } });
    expect(config.defaults.warn).toEqual({ level: 'restricted', version: { latest: true } });
    expect(config.defaults.audit).toEqual({ level: 'privileged', version: { latest: true } });
    expect([
      ...config.exemptions.usernames,
      ...config.exemptions.runtimeClasses,
      ...config.exemptions.namespaces,
    ]).toEqual(['admin', 'kata', 'kube-system']);
  });

  it.each([
    [
      { defaults: { enforce: 'strict' } },
      'PodSecurity: defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted',
    ],
    [
      { defaults: { 'audit-version': 'v1.01' } },
      'PodSecurity: defaults.audit-version: Invalid value: "v1.01": must be "latest" or "v1.x"',
    ],
    [
      { defaults: { 'warn-version': '1.25' } },
      'PodSecurity: defaults.warn-version: Invalid value: "1.25": must be "latest" or "v1.x"',
    ],
    [{ exemptions: { usernames: ['a', ''] } }, 'PodSecurity: exemptions.usernames[1]: Required value'],
    [{ exemptions: { usernames: ['a', 'a'] } }, 'PodSecurity: exemptions.usernames[1]: Duplicate value: "a"'],
    [
      { exemptions: { namespaces: ['ok', 'Not_OK'] } },
      "PodSecurity: exemptions.namespaces[1]: Invalid value: \"Not_OK\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ],
    [
      { exemptions: { runtimeClasses: ['kata', 'kata'] } },
      'PodSecurity: exemptions.runtimeClasses[1]: Duplicate value: "kata"',
    ],
    [
      { defaults: { enforce: 'bogus', warn: 'bogus' } },
      'PodSecurity: [defaults.enforce: Invalid value: "bogus": must be one of privileged, baseline, restricted, defaults.warn: Invalid value: "bogus": must be one of privileged, baseline, restricted]',
    ],
    [
      { defaults: { 'enforce-verison': 'latest' } },
      'PodSecurity: defaults.enforce-verison: unknown field "enforce-verison"; did you mean "enforce-version"?',
    ],
    [
      { exemptions: { runtimeClass: ['kata'] } },
      'PodSecurity: exemptions.runtimeClass: unknown field "runtimeClass"; did you mean "runtimeClasses"?',
    ],
    [{ default: {} }, 'PodSecurity: default: unknown field "default"; did you mean "defaults"?'],
  ])('%j fails the start: %s', (fields, message) => {
    const error = configErrorOf(() =>
      parsePodSecurityConfiguration({
        apiVersion: 'pod-security.admission.config.k8s.io/v1',
        kind: 'PodSecurityConfiguration',
        ...fields,
      }),
    );
    expect(error.message).toBe(message);
  });

  it("reads the operator's own file through the entry's path", () => {
    const dir = mkdtempSync(join(tmpdir(), 'pod-security-'));
    try {
      writeFileSync(
        join(dir, 'psc.yaml'),
        'apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\ndefaults:\n  enforce: restricted\n',
      );
      writeFileSync(
        join(dir, 'admission.yaml'),
        'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n  - name: PodSecurity\n    path: psc.yaml\n',
      );
      const config = configurePlugin<PodSecurityConfig>(
        plugin,
        loadAdmissionConfiguration({ ADMISSION_CONFIG: join(dir, 'admission.yaml') }),
      );
      expect(config.defaults.enforce.level).toBe('restricted');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the apiVersion and kind it wants', () => {
    expect(
      configErrorOf(() =>
        parsePodSecurityConfiguration({
          apiVersion: 'pod-security.admission.config.k8s.io/v1alpha2',
          kind: 'PodSecurityConfiguration',
        }),
      ).field,
    ).toBe('apiVersion');
    expect(
      configErrorOf(() =>
        parsePodSecurityConfiguration({ apiVersion: 'pod-security.admission.config.k8s.io/v1', kind: 'Other' }),
      ).field,
    ).toBe('kind');
  });
});

describe('pods: enforce, audit, warn', () => {
  it('a namespace never seen follows the configured defaults: enforce denies with the violations, in order', async () => {
    const config = configOf({ enforce: 'restricted', audit: 'restricted' });
    const ns = uniqueNamespace('never-seen');
    const response = await validate(config, { object: plainPod(ns) });
    expect(response.allowed).toBe(false);
    expect(response.status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: `pods "p" is forbidden: violates PodSecurity "restricted:latest": ${RESTRICTED_DETAIL}`,
    });
    expect(response.status!.details).toEqual({ name: 'p', group: '', kind: 'pods' });
    expect(response.auditAnnotations).toEqual({
      'enforce-policy': 'restricted:latest',
      'audit-violations': `would violate PodSecurity "restricted:latest": ${RESTRICTED_DETAIL}`,
    });
    // A denied request gets no warnings.
    expect(response.warnings).toBeUndefined();
  });

  it('a compliant pod is allowed with the enforce-policy annotation', async () => {
    const config = configOf({ enforce: 'restricted', 'enforce-version': 'v1.29' });
    const response = await validate(config, { object: restrictedPod(uniqueNamespace('good')) });
    expect(response).toMatchObject({ allowed: true, auditAnnotations: { 'enforce-policy': 'restricted:v1.29' } });
    expect(response.warnings).toBeUndefined();
  });

  it("the namespace's labels override the defaults, mode by mode", async () => {
    const config = configOf({ enforce: 'restricted', audit: 'restricted', warn: 'restricted' });
    const ns = uniqueNamespace('labelled');
    await learnNamespace(config, ns, {
      'pod-security.kubernetes.io/enforce': 'baseline',
      'pod-security.kubernetes.io/warn-version': 'v1.24',
    });
    const response = await validate(config, { object: plainPod(ns) });
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([`would violate PodSecurity "restricted:v1.24": ${RESTRICTED_DETAIL}`]);
    expect(response.auditAnnotations).toEqual({
      'enforce-policy': 'baseline:latest',
      'audit-violations': `would violate PodSecurity "restricted:latest": ${RESTRICTED_DETAIL}`,
    });
  });

  it('a fully privileged namespace short-circuits with enforce-policy privileged:latest (implicit and explicit)', async () => {
    const privileged = (ns: string) => ({
      ...plainPod(ns),
      spec: { hostNetwork: true, containers: [{ name: 'c', securityContext: { privileged: true } }] },
    });
    const implicit = await validate(configOf(), { object: privileged(uniqueNamespace('implicit')) });
    expect(implicit).toEqual({
      uid: expect.any(String),
      allowed: true,
      auditAnnotations: { 'enforce-policy': 'privileged:latest' },
    });
    const config = configOf({ enforce: 'restricted' });
    const ns = uniqueNamespace('privileged');
    await learnNamespace(config, ns, {
      'pod-security.kubernetes.io/enforce': 'privileged',
      'pod-security.kubernetes.io/enforce-version': 'v1.20',
    });
    expect(await validate(config, { object: privileged(ns) })).toEqual({
      uid: expect.any(String),
      allowed: true,
      auditAnnotations: { 'enforce-policy': 'privileged:latest' },
    });
    // Controllers in such a namespace are not evaluated at all.
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', namespace: ns },
      spec: { template: privileged(ns) },
    };
    expect(
      await validate(config, {
        object: deployment,
        kind: { group: 'apps', kind: 'Deployment' },
        resource: { group: 'apps', resource: 'deployments' },
      }),
    ).toEqual({ uid: expect.any(String), allowed: true });
  });

  it('baseline violations, several containers, upstream order (baseline checks first, sorted by check)', async () => {
    const config = configOf({ enforce: 'baseline' });
    const pod: KubeObject = {
      kind: 'Pod',
      metadata: { name: 'bad', namespace: uniqueNamespace('baseline') },
      spec: {
        hostPID: true,
        securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }] },
        volumes: [{ name: 'host', hostPath: { path: '/' } }],
        initContainers: [{ name: 'init', securityContext: { privileged: true } }],
        containers: [
          {
            name: 'a',
            ports: [{ containerPort: 80, hostPort: 80 }],
            securityContext: { capabilities: { add: ['NET_ADMIN'] } },
          },
          { name: 'b', securityContext: { privileged: true, seccompProfile: { type: 'Unconfined' } } },
        ],
      },
    };
    const response = await validate(config, { object: pod });
    expect(response.status!.message).toBe(
      'pods "bad" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities (container "a" must not include "NET_ADMIN" in securityContext.capabilities.add), ' +
        'host namespaces (hostPID=true), hostPath volumes (volume "host"), hostPort (container "a" uses hostPort 80), ' +
        'privileged (containers "init", "b" must not set securityContext.privileged=true), ' +
        'seccompProfile (container "b" must not set securityContext.seccompProfile.type to "Unconfined"), forbidden sysctls (kernel.msgmax)',
    );
  });

  it('invalid labels (already stored): enforce restricted, audit and warn fail open, the error is annotated', async () => {
    const config = configOf();
    const ns = uniqueNamespace('invalid');
    const labels = { 'pod-security.kubernetes.io/enforce': 'bogus', 'pod-security.kubernetes.io/warn': 'bogus' };
    // An update that keeps already-invalid labels is allowed (and learned), as upstream.
    const update = namespaceReview('UPDATE', ns, { labels });
    const learned = await validate(config, update);
    expect(learned.allowed).toBe(true);
    const response = await validate(config, { object: plainPod(ns) });
    expect(response.allowed).toBe(false);
    expect(response.status!.message).toBe(
      `pods "p" is forbidden: violates PodSecurity "restricted:latest": ${RESTRICTED_DETAIL}`,
    );
    expect(response.auditAnnotations).toEqual({
      'enforce-policy': 'restricted:latest',
      error:
        'Failed to parse policy: [metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted, ' +
        'metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: "bogus": must be one of privileged, baseline, restricted]',
    });
  });

  it('ephemeral containers are enforced; status and other ignored subresources are not judged', async () => {
    const config = configOf({ enforce: 'baseline' });
    const ns = uniqueNamespace('ephemeral');
    const old = plainPod(ns);
    const debug = {
      ...old,
      spec: {
        ...(old.spec as object),
        ephemeralContainers: [{ name: 'debug', image: 'busybox', securityContext: { privileged: true } }],
      },
    };
    const response = await validate(config, {
      operation: 'UPDATE',
      subResource: 'ephemeralcontainers',
      object: debug,
      oldObject: old,
    });
    expect(response.status!.message).toBe(
      'pods "p" is forbidden: violates PodSecurity "baseline:latest": privileged (container "debug" must not set securityContext.privileged=true)',
    );
    expect(
      (await validate(config, { operation: 'UPDATE', subResource: 'status', object: debug, oldObject: old })).allowed,
    ).toBe(true);
  });

  it('updates that change nothing the standards look at are not judged again', async () => {
    const config = configOf({ enforce: 'restricted' });
    const ns = uniqueNamespace('updates');
    const old = plainPod(ns);
    const relabelled = { ...old, metadata: { ...old.metadata, labels: { a: 'b' } } };
    expect(await validate(config, { operation: 'UPDATE', object: relabelled, oldObject: old })).toEqual({
      uid: expect.any(String),
      allowed: true,
    });
    const newImage = { ...old, spec: { containers: [{ name: 'c', image: 'j' }] } };
    expect((await validate(config, { operation: 'UPDATE', object: newImage, oldObject: old })).allowed).toBe(false);
    const seccompAnnotation = {
      ...old,
      metadata: { ...old.metadata, annotations: { 'container.seccomp.security.alpha.kubernetes.io/c': 'unconfined' } },
    };
    expect((await validate(config, { operation: 'UPDATE', object: seccompAnnotation, oldObject: old })).allowed).toBe(
      false,
    );
  });
});

describe('exemptions', () => {
  const config = configOf(
    { enforce: 'restricted' },
    { usernames: ['admin'], runtimeClasses: ['kata'], namespaces: ['exempt-ns'] },
  );

  it.each([
    ['namespace', { object: plainPod('exempt-ns') }],
    ['user', { object: plainPod('other'), userInfo: { username: 'admin' } }],
    [
      'runtimeClass',
      { object: { ...plainPod('other'), spec: { runtimeClassName: 'kata', containers: [{ name: 'c' }] } } },
    ],
  ])('%s: allowed with the exempt annotation', async (reason, input) => {
    expect(await validate(config, input as ReviewInput)).toEqual({
      uid: expect.any(String),
      allowed: true,
      auditAnnotations: { exempt: reason },
    });
  });

  it('exemptions apply to pod controllers too', async () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', namespace: 'exempt-ns' },
      spec: { template: { spec: { containers: [{ name: 'c' }] } } },
    };
    const response = await validate(configOf({ warn: 'restricted' }, { namespaces: ['exempt-ns'] }), {
      object: deployment,
      kind: { group: 'apps', kind: 'Deployment' },
      resource: { group: 'apps', resource: 'deployments' },
    });
    expect(response.auditAnnotations).toEqual({ exempt: 'namespace' });
  });
});

describe('pod controllers: warn and audit only', () => {
  const config = configOf({ enforce: 'restricted', warn: 'restricted', audit: 'baseline' });
  const template = { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i' }] } };

  it.each([
    ['apps', 'deployments', 'Deployment', { template }],
    ['apps', 'replicasets', 'ReplicaSet', { template }],
    ['apps', 'statefulsets', 'StatefulSet', { template }],
    ['apps', 'daemonsets', 'DaemonSet', { template }],
    ['batch', 'jobs', 'Job', { template }],
    ['batch', 'cronjobs', 'CronJob', { schedule: '* * * * *', jobTemplate: { spec: { template } } }],
    ['', 'replicationcontrollers', 'ReplicationController', { template }],
  ])('%s/%s: never denied, warned with the template violations', async (group, resource, kind, spec) => {
    const object = {
      apiVersion: group ? `${group}/v1` : 'v1',
      kind,
      metadata: { name: 'ctl', namespace: uniqueNamespace('ctl') },
      spec,
    };
    const response = await validate(config, { object, kind: { group, kind }, resource: { group, resource } });
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([`would violate PodSecurity "restricted:latest": ${RESTRICTED_DETAIL}`]);
    // No enforce-policy: controllers are not enforced. Baseline audit passes.
    expect(response.auditAnnotations).toBeUndefined();
  });

  it('a PodTemplate is judged by its template', async () => {
    const object = {
      apiVersion: 'v1',
      kind: 'PodTemplate',
      metadata: { name: 't', namespace: uniqueNamespace('pt') },
      template: { spec: { containers: [{ name: 'c', securityContext: { privileged: true } }] } },
    };
    const response = await validate(config, {
      object,
      kind: { kind: 'PodTemplate' },
      resource: { resource: 'podtemplates' },
    });
    expect(response.allowed).toBe(true);
    expect(response.auditAnnotations).toEqual({
      'audit-violations':
        'would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)',
    });
  });

  it('a ReplicationController without a template is not judged', async () => {
    const object = {
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name: 'rc', namespace: uniqueNamespace('rc') },
      spec: { replicas: 0 },
    };
    expect(
      await validate(config, {
        object,
        kind: { kind: 'ReplicationController' },
        resource: { resource: 'replicationcontrollers' },
      }),
    ).toEqual({ uid: expect.any(String), allowed: true });
  });

  it('subresources (scale) are not judged', async () => {
    const object = {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'd', namespace: 'x' },
      spec: { replicas: 2 },
    };
    expect(
      (
        await validate(config, {
          object,
          kind: { group: 'autoscaling', kind: 'Scale' },
          resource: { group: 'apps', resource: 'deployments' },
          subResource: 'scale',
        })
      ).auditAnnotations,
    ).toBeUndefined();
  });
});

describe('namespaces: label values and exempt-namespace warnings', () => {
  const config = configOf({ enforce: 'baseline' }, { namespaces: ['exempt-ns'] });

  it('invalid label values are refused on create with upstream field errors (422 Invalid)', async () => {
    const response = await validate(
      config,
      namespaceReview('CREATE', 'bad-labels', {
        labels: { 'pod-security.kubernetes.io/enforce': 'strict', 'pod-security.kubernetes.io/audit-version': 'v1' },
      }),
    );
    expect(response.allowed).toBe(false);
    expect(response.status).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message:
        'Namespace "bad-labels" is invalid: [metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted, ' +
        'metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: "v1": must be "latest" or "v1.x"]',
    });
    expect(response.status!.details!.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "strict": must be one of privileged, baseline, restricted',
        field: 'metadata.labels[pod-security.kubernetes.io/enforce]',
      },
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "v1": must be "latest" or "v1.x"',
        field: 'metadata.labels[pod-security.kubernetes.io/audit-version]',
      },
    ]);
    // A refused namespace is not learned: a pod there follows the defaults.
    expect((await validate(config, { object: { ...plainPod('bad-labels'), spec: { hostIPC: true } } })).allowed).toBe(
      false,
    );
  });

  it('an update may keep invalid labels, but not change them to other invalid values', async () => {
    const old = namespaceReview('UPDATE', 'keeps-bad', { labels: { 'pod-security.kubernetes.io/enforce': 'strict' } });
    expect((await validate(config, old)).allowed).toBe(true);
    const changed = {
      ...old,
      object: {
        ...old.object!,
        metadata: { name: 'keeps-bad', labels: { 'pod-security.kubernetes.io/enforce': 'stricter' } },
      },
    };
    expect((await validate(config, changed)).status!.message).toBe(
      'Namespace "keeps-bad" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "stricter": must be one of privileged, baseline, restricted',
    );
  });

  it('an exempt namespace that sets a policy is warned that it will be ignored', async () => {
    const response = await validate(
      config,
      namespaceReview(
        'CREATE',
        'exempt-ns',
        {
          labels: { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/warn': 'baseline' },
        },
        { namespace: 'exempt-ns' },
      ),
    );
    expect(response).toMatchObject({
      allowed: true,
      warnings: [
        'namespace "exempt-ns" is exempt from Pod Security, and the policy (enforce=restricted:latest,warn=baseline:latest) will be ignored',
      ],
    });
    // The defaults themselves, or privileged, are not worth a warning.
    expect(
      (
        await validate(
          config,
          namespaceReview('CREATE', 'exempt-ns', { labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } }),
        )
      ).warnings,
    ).toBeUndefined();
    expect((await validate(config, namespaceReview('CREATE', 'exempt-ns', {}))).warnings).toBeUndefined();
  });

  it('learned labels take effect for the next pod; a relabel to privileged relaxes it', async () => {
    const ns = uniqueNamespace('relabel');
    await learnNamespace(config, ns, { 'pod-security.kubernetes.io/enforce': 'restricted' });
    expect((await validate(config, { object: plainPod(ns) })).allowed).toBe(false);
    const relabel = namespaceReview('UPDATE', ns, { labels: { 'pod-security.kubernetes.io/enforce': 'privileged' } });
    expect((await validate(config, relabel)).allowed).toBe(true);
    expect((await validate(config, { object: plainPod(ns) })).allowed).toBe(true);
  });
});

describe('metadata', () => {
  it('judges pods and controllers on CREATE and UPDATE, learns namespaces, and writes nothing of its own', () => {
    const rules = plugin.metadata.validating!.rules;
    expect(rules.flatMap((r) => r.resources)).toEqual([
      'pods',
      'pods/ephemeralcontainers',
      'replicationcontrollers',
      'podtemplates',
      'replicasets',
      'deployments',
      'statefulsets',
      'daemonsets',
      'jobs',
      'cronjobs',
    ]);
    expect(rules.every((r) => r.operations.join() === 'CREATE,UPDATE')).toBe(true);
    expect(plugin.metadata).toMatchObject({
      upstreamName: 'PodSecurity',
      name: 'pod-security',
      writes: false,
      needs: ['namespaces'],
    });
  });
});

// admission_test.go TestValidatePodAndController: every pod case, and the same case as a
// Deployment (never enforced). Cases that need a failing decoder or a missing namespace have no
// counterpart here (the webhook receives JSON, and a namespace never seen follows the defaults).
describe('TestValidatePodAndController', () => {
  const config = configOf(
    {},
    { namespaces: ['exempt-ns'], runtimeClasses: ['exempt-runtimeclass'], usernames: ['exempt-user'] },
  );
  const L = 'pod-security.kubernetes.io/';
  const namespaces: Record<string, Record<string, string>> = {
    'exempt-ns': { [`${L}enforce`]: 'restricted', [`${L}warn`]: 'restricted', [`${L}audit`]: 'restricted' },
    'implicit-ns': {},
    'privileged-ns': { [`${L}enforce`]: 'privileged', [`${L}warn`]: 'privileged', [`${L}audit`]: 'privileged' },
    'baseline-ns': { [`${L}enforce`]: 'baseline', [`${L}warn`]: 'baseline', [`${L}audit`]: 'baseline' },
    'baseline-warn-ns': { [`${L}warn`]: 'baseline' },
    'baseline-audit-ns': { [`${L}audit`]: 'baseline' },
    'restricted-ns': { [`${L}enforce`]: 'restricted', [`${L}warn`]: 'restricted', [`${L}audit`]: 'restricted' },
    'invalid-ns': { [`${L}enforce`]: 'not-a-valid-level' },
  };
  beforeAll(async () => {
    // UPDATE keeps (and teaches) even invalid labels, as a namespace that predates them would have.
    for (const [name, labels] of Object.entries(namespaces))
      expect((await validate(config, namespaceReview('UPDATE', name, { labels }))).allowed).toBe(true);
  });

  const meta = { name: 'test-pod', labels: { foo: 'bar' } };
  const baselinePod = {
    metadata: meta,
    spec: {
      initContainers: [{ name: 'initcontainer1', image: 'k8s.gcr.io/pause' }],
      containers: [{ name: 'container1', image: 'k8s.gcr.io/pause' }],
    },
  };
  const restrictedSc = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
  const restrictedPod = {
    metadata: meta,
    spec: {
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      initContainers: [{ name: 'initcontainer1', image: 'k8s.gcr.io/pause', securityContext: restrictedSc }],
      containers: [{ name: 'container1', image: 'k8s.gcr.io/pause', securityContext: restrictedSc }],
    },
  };
  const privilegedPod = {
    metadata: meta,
    spec: {
      ...baselinePod.spec,
      containers: [{ name: 'container1', image: 'k8s.gcr.io/pause', securityContext: { privileged: true } }],
    },
  };
  const exemptRCPod = { ...privilegedPod, spec: { ...privilegedPod.spec, runtimeClassName: 'exempt-runtimeclass' } };
  const tolerantPod = { ...privilegedPod, spec: { ...privilegedPod.spec, tolerations: [{ operator: 'Exists' }] } };
  const differentPrivilegedPod = {
    ...privilegedPod,
    spec: {
      ...privilegedPod.spec,
      containers: [{ ...privilegedPod.spec.containers[0], image: 'https://example.com/a-different-image' }],
    },
  };
  const differentRestrictedPod = {
    ...restrictedPod,
    spec: {
      ...restrictedPod.spec,
      containers: [{ ...restrictedPod.spec.containers[0], image: 'https://example.com/a-different-image' }],
    },
  };

  interface Case {
    desc: string;
    namespace: string;
    username?: string;
    pod?: object;
    oldPod?: object;
    /** A raw object instead of the pod (or its Deployment). */
    obj?: object;
    oldObj?: object;
    operation?: 'UPDATE';
    skipPod?: boolean;
    subresource?: string;
    allowed: boolean;
    reason?: string;
    exempt?: boolean;
    error?: boolean;
    enforce?: string;
    warn?: string;
    audit?: string;
    skipDeployment?: boolean;
  }
  const podCases: Case[] = [
    {
      desc: 'ignored subresource',
      namespace: 'restricted-ns',
      pod: privilegedPod,
      subresource: 'status',
      allowed: true,
    },
    { desc: 'exempt namespace', namespace: 'exempt-ns', pod: privilegedPod, allowed: true, exempt: true },
    {
      desc: 'exempt user',
      namespace: 'restricted-ns',
      username: 'exempt-user',
      pod: privilegedPod,
      allowed: true,
      exempt: true,
    },
    { desc: 'exempt runtimeClass', namespace: 'restricted-ns', pod: exemptRCPod, allowed: true, exempt: true },
    {
      desc: 'short-circuit privileged:latest (implicit)',
      namespace: 'implicit-ns',
      pod: privilegedPod,
      allowed: true,
      enforce: 'privileged',
    },
    {
      desc: 'short-circuit privileged:latest (explicit)',
      namespace: 'privileged-ns',
      pod: privilegedPod,
      allowed: true,
      enforce: 'privileged',
    },
    {
      desc: 'invalid object',
      namespace: 'baseline-ns',
      operation: 'UPDATE',
      obj: { apiVersion: 'v1', kind: 'Namespace', metadata: {} },
      allowed: false,
      reason: 'BadRequest',
      error: true,
      skipDeployment: true,
    },
    {
      desc: 'invalid old object',
      namespace: 'baseline-ns',
      pod: restrictedPod,
      oldObj: { apiVersion: 'v1', kind: 'Namespace', metadata: {} },
      allowed: false,
      reason: 'BadRequest',
      error: true,
      skipDeployment: true,
    },
    {
      desc: 'insignificant update',
      namespace: 'restricted-ns',
      pod: tolerantPod,
      oldPod: privilegedPod,
      allowed: true,
      skipDeployment: true,
    },
    {
      desc: 'significant update denied',
      namespace: 'restricted-ns',
      pod: differentPrivilegedPod,
      oldPod: privilegedPod,
      allowed: false,
      reason: 'Forbidden',
      enforce: 'restricted',
      warn: 'restricted',
      audit: 'restricted',
    },
    {
      desc: 'significant update allowed',
      namespace: 'restricted-ns',
      pod: differentRestrictedPod,
      oldPod: restrictedPod,
      allowed: true,
      enforce: 'restricted',
    },
    {
      desc: 'invalid namespace labels',
      namespace: 'invalid-ns',
      pod: baselinePod,
      allowed: false,
      reason: 'Forbidden',
      enforce: 'restricted',
      error: true,
    },
    {
      desc: 'enforce deny',
      namespace: 'restricted-ns',
      pod: privilegedPod,
      allowed: false,
      reason: 'Forbidden',
      enforce: 'restricted',
      warn: 'restricted',
      audit: 'restricted',
    },
    { desc: 'enforce allow', namespace: 'baseline-ns', pod: baselinePod, allowed: true, enforce: 'baseline' },
    {
      desc: 'warn deny',
      namespace: 'baseline-warn-ns',
      pod: privilegedPod,
      allowed: true,
      enforce: 'privileged',
      warn: 'baseline',
    },
    {
      desc: 'audit deny',
      namespace: 'baseline-audit-ns',
      pod: privilegedPod,
      allowed: true,
      enforce: 'privileged',
      audit: 'baseline',
    },
    // An empty Deployment has a zero template: evaluated, and an empty pod passes.
    {
      desc: 'no pod template',
      namespace: 'restricted-ns',
      obj: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta, spec: {} },
      allowed: true,
      skipPod: true,
    },
  ];
  const toDeployment = (pod: { metadata: object; spec: object }, namespace: string) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { ...pod.metadata, namespace },
    spec: { template: { metadata: pod.metadata, spec: pod.spec } },
  });
  const cases = podCases.flatMap((c) => [
    // Warnings are only returned when the request is allowed.
    ...(c.skipPod ? [] : [{ ...c, kind: 'pod', warn: c.allowed ? c.warn : undefined }]),
    // PodController validation is always non-enforcing.
    ...(c.skipDeployment ? [] : [{ ...c, kind: 'deployment', allowed: true, reason: undefined, enforce: undefined }]),
  ]);

  it.each(cases)('$kind: $desc', async (c) => {
    const withNs = (pod: object | undefined) =>
      pod === undefined
        ? undefined
        : c.kind === 'pod'
          ? {
              apiVersion: 'v1',
              kind: 'Pod',
              ...pod,
              metadata: { ...(pod as { metadata: object }).metadata, namespace: c.namespace },
            }
          : toDeployment(pod as never, c.namespace);
    const input: ReviewInput = {
      operation: c.operation ?? (c.oldPod || c.oldObj ? 'UPDATE' : 'CREATE'),
      object: (c.obj ?? withNs(c.pod)) as KubeObject,
      oldObject: (c.oldObj ?? withNs(c.oldPod) ?? null) as KubeObject | null,
      name: 'test-pod',
      namespace: c.namespace,
      userInfo: { username: c.username ?? 'test-user' },
      ...(c.subresource && { subResource: c.subresource }),
      ...(c.kind === 'deployment' && {
        kind: { group: 'apps', kind: 'Deployment' },
        resource: { group: 'apps', resource: 'deployments' },
      }),
    };
    const response = await validate(config, input);
    expect(response.allowed).toBe(c.allowed);
    if (!c.allowed) expect(response.status!.reason).toBe(c.reason);
    if (c.warn) expect(response.warnings?.[0]).toMatch(new RegExp(`^would violate PodSecurity "${c.warn}:latest": `));
    else expect(response.warnings).toBeUndefined();
    const keys = [
      ...(c.enforce ? ['enforce-policy'] : []),
      ...(c.audit ? ['audit-violations'] : []),
      ...(c.error ? ['error'] : []),
      ...(c.exempt ? ['exempt'] : []),
    ];
    expect(Object.keys(response.auditAnnotations ?? {}).sort()).toEqual(keys.sort());
    if (c.enforce) expect(response.auditAnnotations!['enforce-policy']).toBe(`${c.enforce}:latest`);
  });
});

// admission_test.go TestValidateNamespace: the cases that judge labels alone. The five cases that
// tighten the enforce level dry-run the namespace's existing pods; without a pod listing this
// webhook answers them allowed without those warnings (see the README), as the last case shows.
describe('TestValidateNamespace', () => {
  const E = 'pod-security.kubernetes.io/enforce';
  const V = 'pod-security.kubernetes.io/enforce-version';
  const cases: {
    name: string;
    newLabels: Record<string, string>;
    oldLabels?: Record<string, string>;
    exempt?: boolean;
    defaults?: Record<string, string>;
    allowed: boolean;
    error?: string;
    warnings?: string[];
  }[] = [
    { name: 'create privileged', newLabels: { [E]: 'privileged', [V]: 'v1.0' }, allowed: true },
    { name: 'create baseline', newLabels: { [E]: 'baseline' }, allowed: true },
    { name: 'create restricted', newLabels: { [E]: 'baseline' }, allowed: true },
    {
      name: 'create malformed level',
      newLabels: { [E]: 'unknown' },
      allowed: false,
      error: 'must be one of privileged, baseline, restricted',
    },
    {
      name: 'create malformed version',
      newLabels: { [E]: 'privileged', [V]: 'unknown' },
      allowed: false,
      error: 'must be "latest" or "v1.x"',
    },
    {
      name: 'update no-op',
      newLabels: { [E]: 'restricted', [V]: 'v1.0' },
      oldLabels: { [E]: 'restricted', [V]: 'v1.0' },
      allowed: true,
    },
    {
      name: 'update no-op malformed level',
      newLabels: { [E]: 'unknown' },
      oldLabels: { [E]: 'unknown' },
      allowed: true,
    },
    {
      name: 'update no-op malformed version',
      newLabels: { [E]: 'baseline', [V]: 'unknown' },
      oldLabels: { [E]: 'baseline', [V]: 'unknown' },
      allowed: true,
    },
    {
      name: 'update relax level identical version',
      newLabels: { [E]: 'baseline', [V]: 'v1.0' },
      oldLabels: { [E]: 'restricted', [V]: 'v1.0' },
      allowed: true,
    },
    {
      name: 'update relax level explicit latest',
      newLabels: { [E]: 'baseline', [V]: 'latest' },
      oldLabels: { [E]: 'restricted', [V]: 'latest' },
      allowed: true,
    },
    {
      name: 'update relax level implicit latest',
      newLabels: { [E]: 'baseline' },
      oldLabels: { [E]: 'restricted' },
      allowed: true,
    },
    {
      name: 'update to explicit privileged',
      newLabels: { [E]: 'privileged' },
      oldLabels: { [E]: 'restricted', [V]: 'v1.0' },
      allowed: true,
    },
    {
      name: 'update to implicit privileged',
      newLabels: {},
      oldLabels: { [E]: 'restricted', [V]: 'v1.0' },
      allowed: true,
    },
    {
      name: 'update exempt to restricted',
      exempt: true,
      newLabels: { [E]: 'restricted', [V]: 'v1.0' },
      oldLabels: {},
      allowed: true,
      warnings: [
        'namespace "test" is exempt from Pod Security, and the policy (enforce=restricted:v1.0) will be ignored',
      ],
    },
    {
      name: 'update malformed level',
      newLabels: { [E]: 'unknown' },
      oldLabels: { [E]: 'restricted', [V]: 'v1.0' },
      allowed: false,
      error: 'must be one of privileged, baseline, restricted',
    },
    {
      name: 'update malformed version',
      newLabels: { [E]: 'privileged', [V]: 'unknown' },
      oldLabels: { [E]: 'restricted', [V]: 'v1.0' },
      allowed: false,
      error: 'must be "latest" or "v1.x"',
    },
    {
      name: 'update to implicit restricted (existing pods are not listed)',
      newLabels: {},
      oldLabels: { [E]: 'baseline', [V]: 'v1.0' },
      defaults: { enforce: 'restricted' },
      allowed: true,
    },
  ];

  it.each(cases)('$name', async (c) => {
    const config = configOf(c.defaults ?? {}, c.exempt ? { namespaces: ['test'] } : {});
    const object = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'test', labels: c.newLabels } };
    const input: ReviewInput = {
      operation: c.oldLabels ? 'UPDATE' : 'CREATE',
      kind: { kind: 'Namespace' },
      resource: { resource: 'namespaces' },
      name: 'test',
      namespace: 'test',
      object,
      oldObject: c.oldLabels ? { ...object, metadata: { name: 'test', labels: c.oldLabels } } : null,
      dryRun: true,
    };
    const response = await validate(config, input);
    expect(response.allowed).toBe(c.allowed);
    if (c.error) expect(response.status!.message).toContain(c.error);
    else expect(response.status).toBeUndefined();
    expect(response.warnings).toEqual(c.warnings);
  });
});
