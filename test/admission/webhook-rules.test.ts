// The apiserver's rule matching (staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/
// predicates/rules: Matcher.resource splits "res/sub" and matches each half exactly or by "*"):
// the handler uses it to send a judging endpoint only what its webhook's rules send.
import { describe, expect, it } from 'vitest';
import type { WebhookRule } from '../../lib/admission/plugin.js';
import { ruleSends } from '../../lib/admission/webhook-rules.js';
import { requestOf } from '../support/review.js';

const rule = (resources: string[]): WebhookRule => ({
  operations: ['CREATE'],
  apiGroups: [''],
  apiVersions: ['v1'],
  resources,
  scope: '*',
});
const podRequest = (subResource: string) =>
  requestOf({ resource: { group: '', version: 'v1', resource: 'pods' }, subResource, namespace: 'ns' });

describe('rules.Matcher.resource', () => {
  it.each([
    [['pods'], '', true],
    [['pods'], 'status', false],
    [['pods/status'], 'status', true],
    [['pods/status'], '', false],
    // A subresource wildcard matches the resource itself as well as each subresource.
    [['pods/*'], '', true],
    [['pods/*'], 'exec', true],
    [['*'], '', true],
    [['*'], 'status', false],
    [['*/status'], 'status', true],
    [['*/status'], '', false],
    [['*/*'], '', true],
    [['*/*'], 'binding', true],
    [['nodes/*'], '', false],
  ] as const)('%j sends pods%s: %s', (resources, sub, sends) => {
    expect(ruleSends(rule([...resources]), podRequest(sub))).toBe(sends);
  });
});
