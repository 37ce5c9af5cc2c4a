// The apiserver's defaulting of built-in objects (lib/kube/defaults.ts), which MutatingAdmissionPolicy
// applies after every mutation: core/v1's defaulters (pkg/apis/core/v1/defaults.go) for objects
// holding a pod spec, the schema's declarative defaults for every built-in kind, and the image
// reference parsing the pull-policy default reads (pkg/util/parsers TestParseImageName).
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/admission/types.js';
import { defaultObject, imageTag } from '../../lib/kube/defaults.js';
import { MERGE_SCHEMA } from '../../lib/kube/merge-schema.js';

const defaulted = (object: KubeObject) => defaultObject(MERGE_SCHEMA, object);
const DIGEST = 'sha256:cbbf2f9a99b47fc460d422812b6a5adff7dfee951d8fa2e4a98caa0382cfbdbf';

describe('TestParseImageName: the tag the pull-policy default reads', () => {
  it.each([
    ['ubuntu', 'latest'],
    ['ubuntu:2342', '2342'],
    ['foo/bar:445566', '445566'],
    ['registry.example.com:5000/foobar', 'latest'],
    ['registry.example.com:5000/foobar:5342', '5342'],
    ['registry.example.com:5000/foobar:latest', 'latest'],
    [`registry.example.com:5000/foobar@${DIGEST}`, ''],
    [`registry.example.com:5000/foobar:5342@${DIGEST}`, '5342'],
    // References that do not parse: the defaulter ignores the error and reads no tag.
    ['', ''],
    ['Ubuntu', ''],
    ['ubuntu:', ''],
  ])('%j: tag %j', (image, tag) => {
    expect(imageTag(image)).toBe(tag);
  });
});

const pod = (spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p' },
  spec,
});
const containerOf = (object: KubeObject, list = 'containers', i = 0) =>
  ((object.spec as Record<string, unknown[]>)[list][i] ?? {}) as Record<string, unknown>;

describe('SetDefaults_Container (and init and ephemeral containers)', () => {
  it.each([
    ['nginx', 'Always'],
    ['nginx:latest', 'Always'],
    ['nginx:1.25', 'IfNotPresent'],
    [`nginx@${DIGEST}`, 'IfNotPresent'],
    ['Not-A-Reference', 'IfNotPresent'],
  ])('image %j: imagePullPolicy %s, the termination message defaults', (image, policy) => {
    const result = defaulted(pod({ containers: [{ name: 'c', image }] }));
    expect(containerOf(result)).toEqual({
      name: 'c',
      image,
      imagePullPolicy: policy,
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
    });
  });

  it('keeps what is set; init and ephemeral containers are defaulted too', () => {
    const result = defaulted(
      pod({
        initContainers: [{ name: 'i', image: 'busybox:1' }],
        containers: [
          { name: 'c', image: 'nginx', imagePullPolicy: 'Never', terminationMessagePolicy: 'FallbackToLogsOnError' },
        ],
        ephemeralContainers: [{ name: 'e', image: 'debug' }],
      }),
    );
    expect(containerOf(result)).toMatchObject({
      imagePullPolicy: 'Never',
      terminationMessagePolicy: 'FallbackToLogsOnError',
    });
    expect(containerOf(result, 'initContainers').imagePullPolicy).toBe('IfNotPresent');
    expect(containerOf(result, 'ephemeralContainers').imagePullPolicy).toBe('Always');
  });

  it('probes (SetDefaults_Probe, _HTTPGetAction), lifecycle handlers, env fieldRef apiVersion, port protocol', () => {
    const result = defaulted(
      pod({
        containers: [
          {
            name: 'c',
            image: 'app:1',
            ports: [{ containerPort: 80 }],
            livenessProbe: { httpGet: { port: 80 } },
            readinessProbe: { tcpSocket: { port: 80 }, periodSeconds: 5 },
            lifecycle: { preStop: { httpGet: { port: 80, path: '/stop' } } },
            env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
          },
        ],
      }),
    );
    expect(containerOf(result)).toMatchObject({
      ports: [{ containerPort: 80, protocol: 'TCP' }],
      livenessProbe: {
        httpGet: { port: 80, path: '/', scheme: 'HTTP' },
        timeoutSeconds: 1,
        periodSeconds: 10,
        successThreshold: 1,
        failureThreshold: 3,
      },
      readinessProbe: { periodSeconds: 5, timeoutSeconds: 1 },
      lifecycle: { preStop: { httpGet: { port: 80, path: '/stop', scheme: 'HTTP' } } },
      env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName', apiVersion: 'v1' } } }],
    });
  });
});

describe('SetDefaults_PodSpec, SetDefaults_Pod and the volumes', () => {
  it('a pod: its spec defaults, enableServiceLinks, requests from limits', () => {
    const result = defaulted(
      pod({
        containers: [
          { name: 'c', image: 'app:1', resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m' } } },
        ],
      }),
    );
    expect(result.spec).toMatchObject({
      dnsPolicy: 'ClusterFirst',
      restartPolicy: 'Always',
      securityContext: {},
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
      enableServiceLinks: true,
    });
    expect(containerOf(result).resources).toEqual({
      limits: { cpu: '1', memory: '1Gi' },
      requests: { cpu: '500m', memory: '1Gi' },
    });
  });

  it('host network: container ports get their host port', () => {
    const result = defaulted(
      pod({ hostNetwork: true, containers: [{ name: 'c', image: 'a:1', ports: [{ containerPort: 53 }] }] }),
    );
    expect(containerOf(result).ports).toEqual([{ containerPort: 53, hostPort: 53, protocol: 'TCP' }]);
  });

  it('volumes: emptyDir when no source, modes 0644, hostPath type, service account token expiry', () => {
    const result = defaulted(
      pod({
        containers: [{ name: 'c', image: 'a:1' }],
        volumes: [
          { name: 'scratch' },
          { name: 's', secret: { secretName: 's' } },
          { name: 'cm', configMap: { name: 'cm', defaultMode: 256 } },
          { name: 'h', hostPath: { path: '/var' } },
          { name: 'd', downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name' } }] } },
          { name: 'p', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } },
        ],
      }),
    );
    expect((result.spec as Record<string, unknown>).volumes).toEqual([
      { name: 'scratch', emptyDir: {} },
      { name: 's', secret: { secretName: 's', defaultMode: 420 } },
      { name: 'cm', configMap: { name: 'cm', defaultMode: 256 } },
      { name: 'h', hostPath: { path: '/var', type: '' } },
      {
        name: 'd',
        downwardAPI: {
          defaultMode: 420,
          items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' } }],
        },
      },
      {
        name: 'p',
        projected: { defaultMode: 420, sources: [{ serviceAccountToken: { path: 't', expirationSeconds: 3600 } }] },
      },
    ]);
  });

  it('a pod template gets the pod spec defaults, not the Pod-only ones', () => {
    const result = defaulted({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: {
        template: {
          spec: { containers: [{ name: 'c', image: 'app:1', resources: { limits: { cpu: '1' } } }] },
        },
      },
    });
    const template = (result.spec as { template: { spec: Record<string, unknown> } }).template.spec;
    expect(template).toMatchObject({ dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler' });
    expect(template.enableServiceLinks).toBeUndefined();
    expect((template.containers as Record<string, unknown>[])[0].resources).toEqual({ limits: { cpu: '1' } });
  });

  it.each([
    ['CronJob', 'batch/v1', (t: object) => ({ schedule: '* * * * *', jobTemplate: { spec: { template: t } } })],
    ['PodTemplate', 'v1', undefined],
  ])('%s keeps its pod template where upstream looks for it', (kind, apiVersion, specOf) => {
    const template = { spec: { containers: [{ name: 'c', image: 'app:1' }] } };
    const object = specOf
      ? { apiVersion, kind, metadata: { name: 'x' }, spec: specOf(template) }
      : { apiVersion, kind, metadata: { name: 'x' }, template };
    expect(JSON.stringify(defaulted(object))).toContain('"imagePullPolicy":"IfNotPresent"');
  });
});

describe('the schema’s declarative defaults and the other kinds', () => {
  it('SetDefaults_ReplicationController: selector and labels from the template, replicas 1 (declarative)', () => {
    const result = defaulted({
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name: 'rc' },
      spec: { template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'a:1' }] } } },
    });
    expect(result.metadata?.labels).toEqual({ app: 'x' });
    expect(result.spec).toMatchObject({ selector: { app: 'x' }, replicas: 1 });
  });

  it("a Service's ports get protocol TCP from the schema; its hand-written defaults are not ported", () => {
    const result = defaulted({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: { ports: [{ port: 80 }] },
    });
    expect(result.spec).toEqual({ ports: [{ port: 80, protocol: 'TCP' }] });
  });

  it('leaves kinds the schema does not know, and never changes its input; a second pass changes nothing', () => {
    const custom = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { containers: [{}] },
    };
    expect(defaulted(custom)).toBe(custom);
    const input = pod({ containers: [{ name: 'c', image: 'app' }] });
    const before = structuredClone(input);
    const once = defaulted(input);
    expect(input).toEqual(before);
    // An object already defaulted (what the apiserver sends) is returned as it is, not copied.
    expect(defaulted(once)).toBe(once);
  });
});
