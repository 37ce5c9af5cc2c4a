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
import type { PodSecurityPluginConfig } from '../../functions/pod-security/plugin.js';
import { LATEST, policyToEvaluate, v1 } from '../../functions/pod-security/api.js';
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

/** A fresh namespace without labels, learned as its creation (or `npm run sync`) teaches it. */
async function unlabelled(prefix: string): Promise<string> {
  const name = uniqueNamespace(prefix);
  const result = await lambdaFor(plugin, store, configOf())('learn', namespaceReview('CREATE', name, {}));
  expect(result.review!.response!.allowed).toBe(true);
  return name;
}

async function learnNamespace(config: PodSecurityConfig, name: string, labels: Record<string, string>) {
  const result = await lambdaFor(plugin, store, config)('learn', namespaceReview('CREATE', name, { labels }));
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

/**
 * A write sent to the learning webhook, as the apiserver sends every Namespace write beside the
 * judge: always admitted with nothing else said, whatever the plugin would answer.
 */
async function learnWrite(config: PodSecurityConfig, input: ReviewInput) {
  const result = await lambdaFor(plugin, store, config)('learn', input);
  expect(result.statusCode).toBe(200);
  expect(result.review!.response).toEqual({ uid: expect.any(String), allowed: true });
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
  it('an unlabelled namespace follows the configured defaults: enforce denies with the violations, in order', async () => {
    const config = configOf({ enforce: 'restricted', audit: 'restricted' });
    const ns = await unlabelled('unlabelled');
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
    const response = await validate(config, { object: restrictedPod(await unlabelled('good')) });
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
    const implicit = await validate(configOf(), { object: privileged(await unlabelled('implicit')) });
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
      metadata: { name: 'bad', namespace: await unlabelled('baseline') },
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
    // An update that keeps already-invalid labels is allowed (and so learned), as upstream.
    const update = namespaceReview('UPDATE', ns, { labels });
    expect((await validate(config, update)).allowed).toBe(true);
    await learnWrite(config, update);
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
    const ns = await unlabelled('ephemeral');
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
    const ns = await unlabelled('updates');
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
      metadata: { name: 'ctl', namespace: await unlabelled('ctl') },
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
      metadata: { name: 't', namespace: await unlabelled('pt') },
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
      metadata: { name: 'rc', namespace: await unlabelled('rc') },
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
    // A refused namespace is not learned: the learning webhook, sent the same write, admits it and
    // learns nothing, so a pod there is answered as in a namespace never seen.
    await learnWrite(
      config,
      namespaceReview('CREATE', 'bad-labels', {
        labels: { 'pod-security.kubernetes.io/enforce': 'strict', 'pod-security.kubernetes.io/audit-version': 'v1' },
      }),
    );
    const pod = await validate(config, { object: { ...plainPod('bad-labels'), spec: { hostIPC: true } } });
    expect(pod.allowed).toBe(true);
    expect(pod.warnings).toEqual([expect.stringMatching(/^PodSecurity: namespace "bad-labels" is not learned yet/)]);
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
    // The learning webhook learns the kept labels and not the refused change.
    const learnedLabels = async () =>
      (await store.state({ uid: 'read', dryRun: false }).learnedNamespaces.get('keeps-bad'))?.labels;
    await learnWrite(config, old);
    expect(await learnedLabels()).toEqual({ 'pod-security.kubernetes.io/enforce': 'strict' });
    await learnWrite(config, changed);
    expect(await learnedLabels()).toEqual({ 'pod-security.kubernetes.io/enforce': 'strict' });
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
        'namespace "exempt-ns" is exempt from Pod Security, and the policy (enforce=restricted:latest, warn=baseline:latest) will be ignored',
      ],
    });
    // The defaults themselves, or privileged, are not worth a warning. (Restating enforce=baseline
    // alone is not the defaults: warn then follows enforce, so upstream warns.)
    const restated = {
      'pod-security.kubernetes.io/enforce': 'baseline',
      'pod-security.kubernetes.io/warn': 'privileged',
    };
    expect(
      (await validate(config, namespaceReview('CREATE', 'exempt-ns', { labels: restated }))).warnings,
    ).toBeUndefined();
    expect(
      (
        await validate(
          config,
          namespaceReview('CREATE', 'exempt-ns', { labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } }),
        )
      ).warnings,
    ).toEqual([
      'namespace "exempt-ns" is exempt from Pod Security, and the policy (enforce=baseline:latest) will be ignored',
    ]);
    expect((await validate(config, namespaceReview('CREATE', 'exempt-ns', {}))).warnings).toBeUndefined();
  });

  it('learned labels take effect for the next pod; a relabel to privileged relaxes it', async () => {
    const ns = uniqueNamespace('relabel');
    await learnNamespace(config, ns, { 'pod-security.kubernetes.io/enforce': 'restricted' });
    expect((await validate(config, { object: plainPod(ns) })).allowed).toBe(false);
    const relabel = namespaceReview('UPDATE', ns, { labels: { 'pod-security.kubernetes.io/enforce': 'privileged' } });
    expect((await validate(config, relabel)).allowed).toBe(true);
    // The judge only judged it: the pod is still refused until the learning webhook sees the write.
    expect((await validate(config, { object: plainPod(ns) })).allowed).toBe(false);
    await learnWrite(config, relabel);
    expect((await validate(config, { object: plainPod(ns) })).allowed).toBe(true);
  });
});

describe('metadata', () => {
  it('judges pods, controllers and namespaces on CREATE and UPDATE, learns namespaces, writes nothing of its own', () => {
    const { rules, failurePolicyGroups } = plugin.metadata.validating!;
    const podRules = [
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
    ];
    expect(rules.flatMap((r) => r.resources)).toEqual([...podRules, 'namespaces']);
    expect(rules.every((r) => r.operations.join() === 'CREATE,UPDATE')).toBe(true);
    // Upstream's webhook judges namespaces too; here on a judge of their own that fails open.
    expect(failurePolicyGroups?.map((g) => [g.failurePolicy, g.rules.flatMap((r) => r.resources)])).toEqual([
      ['Fail', podRules],
      ['Ignore', ['namespaces']],
    ]);
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
    for (const [name, labels] of Object.entries(namespaces)) {
      expect((await validate(config, namespaceReview('UPDATE', name, { labels }))).allowed).toBe(true);
      await learnWrite(config, namespaceReview('UPDATE', name, { labels }));
    }
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
// webhook answers them allowed without those warnings (docs/plugins/pod-security.md), as the last case
// shows.
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

// api/helpers_test.go TestPolicyToEvaluate: the namespace's labels over privileged defaults, and
// since Kubernetes 1.26 the warn level following a valid enforce label that is stricter.
describe('TestPolicyToEvaluate', () => {
  const privileged = { level: 'privileged', version: LATEST } as const;
  const lv = (level: 'baseline' | 'restricted', version = LATEST) => ({ level, version });
  const labels = (...kvs: string[]) => {
    const out: Record<string, string> = { 'other-label': 'foo-bar' };
    for (let i = 0; i < kvs.length; i += 2) out[`pod-security.kubernetes.io/${kvs[i]}`] = kvs[i + 1];
    return out;
  };
  const cases = [
    { desc: 'simple enforce', labels: labels('enforce', 'baseline'), enforce: lv('baseline'), warn: lv('baseline') },
    { desc: 'simple warn', labels: labels('warn', 'restricted'), enforce: privileged, warn: lv('restricted') },
    { desc: 'simple audit', labels: labels('audit', 'baseline'), audit: lv('baseline') },
    {
      desc: 'enforce & warn',
      labels: labels('enforce', 'baseline', 'warn', 'restricted'),
      enforce: lv('baseline'),
      warn: lv('restricted'),
    },
    {
      desc: 'enforce version',
      labels: labels('enforce', 'baseline', 'enforce-version', 'v1.22'),
      enforce: lv('baseline', v1(22)),
      warn: lv('baseline', v1(22)),
    },
    {
      desc: 'enforce version & warn-version',
      labels: labels('enforce', 'baseline', 'enforce-version', 'v1.22', 'warn-version', 'latest'),
      enforce: lv('baseline', v1(22)),
      warn: lv('baseline'),
    },
    {
      desc: 'enforce & warn-version',
      labels: labels('enforce', 'baseline', 'warn-version', 'v1.23'),
      enforce: lv('baseline'),
      warn: lv('baseline', v1(23)),
    },
    {
      desc: 'fully specd',
      labels: labels(
        ...['enforce', 'baseline', 'enforce-version', 'v1.20', 'warn', 'restricted', 'warn-version', 'v1.21'],
        ...['audit', 'restricted', 'audit-version', 'v1.22'],
      ),
      enforce: lv('baseline', v1(20)),
      warn: lv('restricted', v1(21)),
      audit: lv('restricted', v1(22)),
    },
    {
      desc: 'enforce no warn',
      labels: labels('enforce', 'baseline', 'warn', 'privileged'),
      enforce: lv('baseline'),
      warn: privileged,
    },
    {
      desc: 'enforce warn error',
      labels: labels('enforce', 'baseline', 'warn', 'foo'),
      enforce: lv('baseline'),
      warn: privileged,
      error: true,
    },
    {
      desc: 'enforce error',
      labels: labels('enforce', 'foo'),
      enforce: lv('restricted'),
      warn: privileged,
      error: true,
    },
  ];
  const defaults = configOf().defaults;

  it.each(cases)('$desc', (c) => {
    const { policy, errors } = policyToEvaluate(c.labels, defaults);
    expect(policy).toEqual({
      enforce: c.enforce ?? privileged,
      warn: c.warn ?? privileged,
      audit: c.audit ?? privileged,
    });
    expect(errors.length > 0).toBe(c.error === true);
  });

  it('defaults alone never move warn: a configured enforce level is not a label', () => {
    const { policy } = policyToEvaluate({}, configOf({ enforce: 'restricted' }).defaults);
    expect(policy.warn).toEqual(privileged);
  });
});

describe('pod controllers warn at the enforce level of a namespace that sets only enforce', () => {
  const config = configOf();
  const deploymentIn = (namespace: string, template: object) => ({
    object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace }, spec: { template } },
    kind: { group: 'apps', kind: 'Deployment' },
    resource: { group: 'apps', resource: 'deployments' },
  });
  const privilegedTemplate = {
    spec: { containers: [{ name: 'c', image: 'i', securityContext: { privileged: true } }] },
  };
  const BASELINE_DETAIL = 'privileged (container "c" must not set securityContext.privileged=true)';

  it.each([
    ['enforce=baseline', { 'pod-security.kubernetes.io/enforce': 'baseline' }, 'baseline:latest'],
    [
      'enforce=baseline, enforce-version=v1.22',
      { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/enforce-version': 'v1.22' },
      'baseline:v1.22',
    ],
    [
      'enforce=baseline, warn-version=v1.23',
      { 'pod-security.kubernetes.io/enforce': 'baseline', 'pod-security.kubernetes.io/warn-version': 'v1.23' },
      'baseline:v1.23',
    ],
  ])('%s: one warning at %s, never a refusal', async (_, nsLabels, levelVersion) => {
    const ns = uniqueNamespace('enforce-only');
    await learnNamespace(config, ns, nsLabels);
    const response = await validate(config, deploymentIn(ns, privilegedTemplate));
    expect(response.allowed).toBe(true);
    expect(response.warnings).toEqual([`would violate PodSecurity "${levelVersion}": ${BASELINE_DETAIL}`]);
    expect(response.auditAnnotations).toBeUndefined();
    // The same template as a pod is refused, with no warning beside the refusal.
    const pod = await validate(config, {
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: ns }, ...privilegedTemplate },
    });
    expect(pod.allowed).toBe(false);
    expect(pod.status!.message).toBe(
      `pods "p" is forbidden: violates PodSecurity "${levelVersion.replace(/v1\.23$/, 'latest')}": ${BASELINE_DETAIL}`,
    );
    expect(pod.warnings).toBeUndefined();
  });

  it('an explicit warn=privileged keeps controllers silent', async () => {
    const ns = uniqueNamespace('enforce-no-warn');
    await learnNamespace(config, ns, {
      'pod-security.kubernetes.io/enforce': 'baseline',
      'pod-security.kubernetes.io/warn': 'privileged',
    });
    expect(await validate(config, deploymentIn(ns, privilegedTemplate))).toEqual({
      uid: expect.any(String),
      allowed: true,
    });
  });
});

// admission.go exemptNamespaceWarning: only the non-privileged modes the namespace's labels set,
// joined with ", ".
describe('exempt namespace warning', () => {
  const L = 'pod-security.kubernetes.io/';
  it.each([
    [
      'every mode labelled',
      {
        [`${L}enforce`]: 'baseline',
        [`${L}enforce-version`]: 'v1.22',
        [`${L}audit`]: 'restricted',
        [`${L}audit-version`]: 'v1.30',
        [`${L}warn`]: 'restricted',
      },
      '(enforce=baseline:v1.22, audit=restricted:v1.30, warn=restricted:latest)',
    ],
    [
      'enforce only: the warn level it implies is not printed',
      { [`${L}enforce`]: 'restricted' },
      '(enforce=restricted:latest)',
    ],
    ['a version label alone names its mode', { [`${L}audit-version`]: 'v1.25' }, '(audit=baseline:v1.25)'],
  ])('%s', async (_, labels, policy) => {
    const config = configOf({ audit: 'baseline' }, { namespaces: ['exempt-ns'] });
    const response = await validate(
      config,
      namespaceReview('CREATE', 'exempt-ns', { labels }, { namespace: 'exempt-ns' }),
    );
    expect(response.warnings).toEqual([
      `namespace "exempt-ns" is exempt from Pod Security, and the policy ${policy} will be ignored`,
    ]);
  });
});

// A namespace never seen (created before installation, not yet synced): its labels are unknown, and
// the built-in PodSecurity of the same cluster reads them. Nothing is enforced, one warning names
// the sync, and says what the configured defaults would say of an unlabelled namespace.
describe('never-seen namespaces (POD_SECURITY_UNKNOWN_NAMESPACE)', () => {
  const config = configOf(
    { enforce: 'baseline', warn: 'restricted' },
    { runtimeClasses: ['kata'], usernames: ['admin'] },
  );
  const netAdminPod = (namespace: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'net', namespace },
    spec: { containers: [{ name: 'c', image: 'i', securityContext: { capabilities: { add: ['NET_ADMIN'] } } }] },
  });
  const NET_ADMIN =
    'non-default capabilities (container "c" must not include "NET_ADMIN" in securityContext.capabilities.add)';
  const sync = "; load the cluster's existing namespaces with npm run sync (docs/seed-state.md)";

  it('a pod the defaults would refuse is admitted with one warning saying so, and no audit annotation', async () => {
    const ns = uniqueNamespace('before-install');
    const response = await validate(config, { object: netAdminPod(ns) });
    expect(response).toEqual({
      uid: expect.any(String),
      allowed: true,
      warnings: [
        `PodSecurity: namespace "${ns}" is not learned yet, so its pod-security labels are unknown and this pod was not judged by the configured defaults (if it has no labels, they say: violates PodSecurity "baseline:latest": ${NET_ADMIN})${sync}`,
      ],
    });
  });

  it('a pod only the warn default flags, a compliant pod, and a Deployment each get the one warning', async () => {
    const ns = uniqueNamespace('before-install');
    const plain = await validate(config, { object: plainPod(ns) });
    expect(plain.warnings).toEqual([
      `PodSecurity: namespace "${ns}" is not learned yet, so its pod-security labels are unknown and this pod was not judged by the configured defaults (if it has no labels, they say: would violate PodSecurity "restricted:latest": ${RESTRICTED_DETAIL})${sync}`,
    ]);
    const good = await validate(config, { object: restrictedPod(ns) });
    expect(good.warnings).toEqual([
      `PodSecurity: namespace "${ns}" is not learned yet, so its pod-security labels are unknown and this pod was not judged by the configured defaults${sync}`,
    ]);
    const deployment = await validate(config, {
      object: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd', namespace: ns },
        spec: { template: plainPod(ns) },
      },
      kind: { group: 'apps', kind: 'Deployment' },
      resource: { group: 'apps', resource: 'deployments' },
    });
    // A controller is never enforced upstream: only the warn default is reported.
    expect(deployment).toEqual({
      uid: expect.any(String),
      allowed: true,
      warnings: [
        `PodSecurity: namespace "${ns}" is not learned yet, so its pod-security labels are unknown and the configured defaults were not applied (if it has no labels, they say: would violate PodSecurity "restricted:latest": ${RESTRICTED_DETAIL})${sync}`,
      ],
    });
  });

  it('exemptions need no labels: exempt user and runtime class answer as ever, without the warning', async () => {
    const ns = uniqueNamespace('before-install');
    expect(await validate(config, { object: netAdminPod(ns), userInfo: { username: 'admin' } })).toEqual({
      uid: expect.any(String),
      allowed: true,
      auditAnnotations: { exempt: 'user' },
    });
    const kata = { ...netAdminPod(ns), spec: { ...(netAdminPod(ns).spec as object), runtimeClassName: 'kata' } };
    expect(await validate(config, { object: kata })).toEqual({
      uid: expect.any(String),
      allowed: true,
      auditAnnotations: { exempt: 'runtimeClass' },
    });
  });

  it('a namespace labelled privileged before install admits a NET_ADMIN pod, before and after the sync', async () => {
    const ns = uniqueNamespace('privileged-before-install');
    expect((await validate(config, { object: netAdminPod(ns) })).allowed).toBe(true);
    // npm run sync (or the namespace's next write) teaches its labels: then the answer is the built-in's.
    await learnNamespace(config, ns, {
      'pod-security.kubernetes.io/enforce': 'privileged',
      'pod-security.kubernetes.io/warn': 'privileged',
    });
    expect(await validate(config, { object: netAdminPod(ns) })).toEqual({
      uid: expect.any(String),
      allowed: true,
      auditAnnotations: { 'enforce-policy': 'privileged:latest' },
    });
  });

  it('POD_SECURITY_UNKNOWN_NAMESPACE=defaults judges a never-seen namespace as an unlabelled one', async () => {
    const raw = {
      apiVersion: 'pod-security.admission.config.k8s.io/v1',
      kind: 'PodSecurityConfiguration',
      defaults: { enforce: 'baseline' },
    };
    const previous = process.env.POD_SECURITY_UNKNOWN_NAMESPACE;
    try {
      process.env.POD_SECURITY_UNKNOWN_NAMESPACE = 'defaults';
      const configured = plugin.configure!(raw, { file: 'admission.yaml' } as never) as PodSecurityPluginConfig;
      expect(configured.unknownNamespace).toBe('defaults');
      const response = await validate(configured, { object: netAdminPod(uniqueNamespace('before-install')) });
      expect(response.allowed).toBe(false);
      expect(response.status!.message).toBe(
        `pods "net" is forbidden: violates PodSecurity "baseline:latest": ${NET_ADMIN}`,
      );
      delete process.env.POD_SECURITY_UNKNOWN_NAMESPACE;
      expect(
        (plugin.configure!(raw, { file: 'admission.yaml' } as never) as PodSecurityPluginConfig).unknownNamespace,
      ).toBe('warn');
      process.env.POD_SECURITY_UNKNOWN_NAMESPACE = 'deny';
      expect(() => plugin.configure!(raw, { file: 'admission.yaml' } as never)).toThrow(
        'POD_SECURITY_UNKNOWN_NAMESPACE: must be one of warn, defaults, got "deny"',
      );
    } finally {
      if (previous === undefined) delete process.env.POD_SECURITY_UNKNOWN_NAMESPACE;
      else process.env.POD_SECURITY_UNKNOWN_NAMESPACE = previous;
    }
  });
});
