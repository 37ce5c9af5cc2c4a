// Numbers as a kube-apiserver's policy sees them (issue 13): its unstructured decoding makes `10`
// an int and `10.0` a double, and keeps an int64 beyond 2^53 exact. Through the real Lambda
// handler, with the review's body written out as text, since JSON.parse would erase both.
import { describe, expect, it } from 'vitest';
import plugin from '../../functions/validating-admission-policy/plugin.js';
import type { PluginConfig } from '../../functions/validating-admission-policy/config.js';
import { createAdmissionHandler } from '../../lib/http/admission-handler.js';
import { pluginMetrics } from '../../lib/metrics/index.js';
import { NO_STATE } from '../../lib/admission/ports.js';
import { gatewayEvent, lambdaContext } from '../support/gateway-event.js';

const policy = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name: 'widget-numbers' },
  spec: {
    failurePolicy: 'Fail',
    matchConstraints: {
      resourceRules: [
        { apiGroups: ['example.com'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['widgets'] },
      ],
    },
    validations: [
      { expression: 'type(object.spec.weight) == double', message: 'weight is not a double' },
      { expression: 'object.spec.id == 9007199254740993', message: 'id is not 9007199254740993' },
      { expression: 'type(object.spec.count) == int', message: 'count is not an int' },
    ],
  },
};
const binding = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  metadata: { name: 'widget-numbers' },
  spec: { policyName: 'widget-numbers', validationActions: ['Deny'] },
};
const config = plugin.configure?.({ manifests: [policy, binding] }, { file: 'test', baseDir: '.' }) as PluginConfig;
const handler = createAdmissionHandler(plugin, {
  config,
  callerAuth: { mode: 'mtls', allowedSubjects: [] },
  metrics: pluginMetrics('validating-admission-policy', 'off'),
  state: () => NO_STATE,
});

/** A review whose object's spec is written as given, digits and decimal points included. */
const reviewText = (spec: string) =>
  `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1",` +
  `"kind":{"group":"example.com","version":"v1","kind":"Widget"},` +
  `"resource":{"group":"example.com","version":"v1","resource":"widgets"},"name":"w","namespace":"default",` +
  `"operation":"CREATE","userInfo":{"username":"alice"},` +
  `"object":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},"spec":${spec}}}}`;

async function answer(spec: string) {
  const result = await handler(gatewayEvent('/validating-admission-policy/validate', reviewText(spec)), lambdaContext);
  expect(result.statusCode).toBe(200);
  return JSON.parse(result.body).response as { allowed: boolean; status?: { message: string } };
}

describe('ValidatingAdmissionPolicy: JSON numbers typed as the apiserver types them', () => {
  it('sees 10.0 as a double, 10 as an int, and 9007199254740993 exactly', async () => {
    expect(await answer('{"weight":10.0,"id":9007199254740993,"count":10}')).toMatchObject({ allowed: true });
  });

  it('sees 10 as an int where the policy wants a double', async () => {
    const response = await answer('{"weight":10,"id":9007199254740993,"count":10}');
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toContain('weight is not a double');
  });

  it('tells 9007199254740992 from 9007199254740993 (JSON.parse cannot)', async () => {
    const response = await answer('{"weight":1.5,"id":9007199254740992,"count":10}');
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toContain('id is not 9007199254740993');
  });

  it('sees 1e1 as a double, as Go decodes an exponent', async () => {
    const response = await answer('{"weight":2.5,"id":9007199254740993,"count":1e1}');
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toContain('count is not an int');
  });
});
