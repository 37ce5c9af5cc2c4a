// NamespaceReservation has no upstream test table: OpenShift's reservation lives in
// openshift-apiserver's projectrequest storage (forbiddenNames / forbiddenPrefixes). These cases
// pin its messages as OpenShift prints them, the same reservation for Namespaces, other resources,
// the operations handled, configuration errors and v1beta1.
import { describe, expect, it } from 'vitest';
import plugin, { type NamespaceReservationConfig } from '../../functions/namespace-reservation/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { deniedMessage, runPhase } from '../support/review.js';
import { configErrorOf } from '../support/config-error.js';
import { itHandles } from '../support/handles.js';
import { NAMESPACES, OPENSHIFT_RESERVATION, PROJECT_REQUESTS } from '../support/cases/namespace-reservation.js';

const SOURCE = { file: 'test', baseDir: '.' };
const configure = (raw: unknown) => plugin.configure!(raw, SOURCE) as NamespaceReservationConfig;
// OpenShift's own lists.
const OPENSHIFT = configure(OPENSHIFT_RESERVATION);

const namespace = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const projectRequest = (name: string): KubeObject => ({
  apiVersion: 'project.openshift.io/v1',
  kind: 'ProjectRequest',
  metadata: { name },
  displayName: name,
});

describe('ProjectRequests: OpenShift forbiddenNames and forbiddenPrefixes', () => {
  it.each([
    {
      name: 'openshift',
      message:
        'project.project.openshift.io "openshift" is forbidden: cannot request a project with the name "openshift"',
    },
    {
      name: 'kube',
      message: 'project.project.openshift.io "kube" is forbidden: cannot request a project with the name "kube"',
    },
    {
      name: 'openshift-logging',
      message:
        'project.project.openshift.io "openshift-logging" is forbidden: cannot request a project starting with "openshift-"',
    },
    {
      name: 'kube-burner-test',
      message:
        'project.project.openshift.io "kube-burner-test" is forbidden: cannot request a project starting with "kube-"',
    },
    {
      name: 'kubernetes-x',
      message:
        'project.project.openshift.io "kubernetes-x" is forbidden: cannot request a project starting with "kubernetes-"',
    },
    { name: 'observability', message: undefined },
    { name: 'kubeflow', message: undefined },
    { name: 'my-openshift-app', message: undefined },
  ])('$name', async ({ name, message }) => {
    const result = await runPhase(plugin, 'validate', { ...PROJECT_REQUESTS, object: projectRequest(name) }, OPENSHIFT);
    expect(deniedMessage(result)).toBe(message);
    if (message)
      expect(result.wire.response!.status).toMatchObject({
        code: 403,
        reason: 'Forbidden',
        status: 'Failure',
        details: { name, group: 'project.openshift.io', kind: 'project' },
      });
  });
});

describe('Namespaces: the same reservation, worded for namespaces', () => {
  it.each([
    { name: 'kube', message: 'namespaces "kube" is forbidden: cannot create a namespace with the name "kube"' },
    {
      name: 'openshift-monitoring',
      message: 'namespaces "openshift-monitoring" is forbidden: cannot create a namespace starting with "openshift-"',
    },
    { name: 'team-a', message: undefined },
  ])('$name', async ({ name, message }) => {
    const result = await runPhase(plugin, 'validate', { ...NAMESPACES, object: namespace(name) }, OPENSHIFT);
    expect(deniedMessage(result)).toBe(message);
    if (message)
      expect(result.wire.response!.status).toMatchObject({
        code: 403,
        reason: 'Forbidden',
        details: { name, group: '', kind: 'namespaces' },
      });
  });

  it('a generateName with a reserved prefix is refused: every generated name would carry it', async () => {
    const result = await runPhase(
      plugin,
      'validate',
      { ...NAMESPACES, object: { kind: 'Namespace', metadata: { generateName: 'kube-' } } },
      OPENSHIFT,
    );
    expect(deniedMessage(result)).toBe(
      'namespaces "kube-" is forbidden: cannot create a namespace starting with "kube-"',
    );
    const free = await runPhase(
      plugin,
      'validate',
      { ...NAMESPACES, object: { kind: 'Namespace', metadata: { generateName: 'team-' } } },
      OPENSHIFT,
    );
    expect(deniedMessage(free)).toBeUndefined();
  });

  it('names are compared exactly: a reserved name is not a prefix', async () => {
    const config = configure({ reservedNames: ['prod'] });
    expect(
      deniedMessage(await runPhase(plugin, 'validate', { ...NAMESPACES, object: namespace('prod') }, config)),
    ).toContain('with the name "prod"');
    expect(
      deniedMessage(await runPhase(plugin, 'validate', { ...NAMESPACES, object: namespace('production') }, config)),
    ).toBeUndefined();
  });

  it('without configuration nothing is reserved', async () => {
    expect(
      deniedMessage(
        await runPhase(plugin, 'validate', { ...NAMESPACES, object: namespace('kube-anything') }, configure(undefined)),
      ),
    ).toBeUndefined();
  });
});

describe('other resources and subresources are ignored', () => {
  it.each([
    { name: 'namespace finalize subresource', target: NAMESPACES, subResource: 'finalize' },
    { name: 'namespace status subresource', target: NAMESPACES, subResource: 'status' },
    {
      name: 'projects (admin-made) of project.openshift.io',
      target: {
        kind: { group: 'project.openshift.io', kind: 'Project' },
        resource: { group: 'project.openshift.io', resource: 'projects' },
      },
      subResource: undefined,
    },
    {
      name: 'configmaps named like a reserved namespace',
      target: { kind: { kind: 'ConfigMap' }, resource: { resource: 'configmaps' } },
      subResource: undefined,
    },
  ])('$name', async ({ target, subResource }) => {
    const result = await runPhase(
      plugin,
      'validate',
      { ...target, subResource, object: namespace('kube-x') },
      OPENSHIFT,
    );
    expect(result.wire.response!.allowed).toBe(true);
  });

  it('declares Namespace and ProjectRequest creates only', () => {
    expect(plugin.metadata.validating!.rules).toEqual([
      { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], scope: 'Cluster' },
      {
        operations: ['CREATE'],
        apiGroups: ['project.openshift.io'],
        apiVersions: ['v1'],
        resources: ['projectrequests'],
        scope: 'Cluster',
      },
    ]);
    expect(plugin.metadata).toMatchObject({
      name: 'namespace-reservation',
      writes: false,
      needs: [],
      validating: { failurePolicy: 'Fail', timeoutSeconds: 3 },
    });
  });
});

describe('handles these operations', () => {
  itHandles(plugin, ['CREATE'], { object: namespace('kube-x'), input: NAMESPACES, config: OPENSHIFT });

  it('answers a v1beta1 review in kind, with the same uid', async () => {
    const result = await runPhase(
      plugin,
      'validate',
      {
        ...PROJECT_REQUESTS,
        apiVersion: 'admission.k8s.io/v1beta1',
        uid: 'beta-uid',
        object: projectRequest('kube-x'),
      },
      OPENSHIFT,
    );
    expect(result.wire.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(result.wire.response).toMatchObject({ uid: 'beta-uid', allowed: false, status: { code: 403 } });
  });
});

describe('configuration errors name the plugin and the field', () => {
  it.each([
    { raw: 'kube-', field: 'configuration' },
    { raw: { reservedNames: 'kube' }, field: 'reservedNames' },
    { raw: { reservedNames: ['ok', ''] }, field: 'reservedNames[1]' },
    { raw: { reservedPrefixes: [42] }, field: 'reservedPrefixes[0]' },
    { raw: { reservedPrefix: ['kube-'] }, field: 'reservedPrefix' },
  ])('$field', ({ raw, field }) => {
    const error = configErrorOf(() => configure(raw));
    expect(error).toMatchObject({ plugin: 'NamespaceReservation', field });
  });
});
