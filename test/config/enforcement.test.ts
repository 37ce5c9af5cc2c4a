// The project's `enforcement` and `exemptions` beside an entry's `name` and `configuration`: read
// strictly (exact values, unknown fields with suggestions, label selectors validated as the
// apiserver validates them), carried per plugin, upstream's `configuration` left untouched.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { plugins as registry } from '../../functions/index.js';
import { parseAdmissionConfiguration } from '../../lib/config/admission-configuration.js';
import { configurePlugins } from '../../lib/config/plugins.js';
import { checkConfigCommand } from '../../infra/check-config.js';
import { configErrorOf } from '../support/config-error.js';

const parse = (entries: unknown[]) =>
  parseAdmissionConfiguration(
    stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AdmissionConfiguration', plugins: entries }),
    'admission.yaml',
  );

const ISSUE_EXAMPLE = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: AlwaysPullImages
  enforcement: Warn            # Deny (default) | Warn | Audit
  exemptions:
    namespaces: [legacy-apps]
    usernames: [system:serviceaccount:ci:deployer]
    groups: [platform-admins]
    namespaceSelector: {matchLabels: {admission.example.com/exempt: "true"}}
    objectSelector: {matchExpressions: [{key: skip-admission, operator: Exists}]}
  configuration: {}            # upstream's own, unchanged
`;

describe('reading enforcement and exemptions', () => {
  it("reads the issue's example onto the plugin, configuration untouched", () => {
    const configuration = parseAdmissionConfiguration(ISSUE_EXAMPLE, 'admission.yaml');
    expect(configuration.entries.get('AlwaysPullImages')).toEqual({});
    const set = configurePlugins(registry, configuration);
    const configured = set.plugins.find((p) => p.plugin.metadata.upstreamName === 'AlwaysPullImages')!;
    expect(configured.enforcement).toBe('Warn');
    expect(configured.exemptions).toEqual({
      namespaces: ['legacy-apps'],
      usernames: ['system:serviceaccount:ci:deployer'],
      groups: ['platform-admins'],
      namespaceSelector: { matchLabels: { 'admission.example.com/exempt': 'true' } },
      objectSelector: { matchExpressions: [{ key: 'skip-admission', operator: 'Exists' }] },
    });
  });

  it('defaults to Deny without exemptions, with or without an entry', () => {
    const set = configurePlugins(registry, parse([{ name: 'AlwaysPullImages' }]));
    for (const configured of set.plugins) {
      expect(configured.enforcement).toBe('Deny');
      expect(configured.exemptions).toEqual({ namespaces: [], usernames: [], groups: [] });
    }
  });

  it.each(['Deny', 'Warn', 'Audit'])('accepts enforcement %s', (enforcement) => {
    expect(parse([{ name: 'AlwaysPullImages', enforcement }]).enforcement.get('AlwaysPullImages')?.enforcement).toBe(
      enforcement,
    );
  });

  const refused: [string, Record<string, unknown>, string][] = [
    [
      'an enforcement value in the wrong case',
      { enforcement: 'warn' },
      'AlwaysPullImages: plugins[0].enforcement: Unsupported value: "warn": supported values: "Deny", "Warn", "Audit"',
    ],
    [
      'an enforcement that is not a string',
      { enforcement: true },
      'AlwaysPullImages: plugins[0].enforcement: Invalid value: true: must be a string',
    ],
    [
      'exemptions that are not an object',
      { exemptions: ['legacy-apps'] },
      'AlwaysPullImages: plugins[0].exemptions: must be an object',
    ],
    [
      'an unknown exemption, with the closest known one',
      { exemptions: { namespace: ['a'] } },
      'AlwaysPullImages: plugins[0].exemptions.namespace: unknown field "namespace"; did you mean "namespaces"?',
    ],
    [
      'usernames that are not a list of strings',
      { exemptions: { usernames: 'ci' } },
      'AlwaysPullImages: plugins[0].exemptions.usernames: must be a list of strings',
    ],
    [
      'an empty group',
      { exemptions: { groups: ['a', ''] } },
      'AlwaysPullImages: plugins[0].exemptions.groups[1]: Required value',
    ],
    [
      'a repeated username',
      { exemptions: { usernames: ['ci', 'ci'] } },
      'AlwaysPullImages: plugins[0].exemptions.usernames[1]: Duplicate value: "ci"',
    ],
    [
      'a namespace that is not a namespace name',
      { exemptions: { namespaces: ['Legacy_Apps'] } },
      'AlwaysPullImages: plugins[0].exemptions.namespaces[0]: Invalid value: "Legacy_Apps": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character',
    ],
    [
      'an unknown selector field',
      { exemptions: { objectSelector: { matchLabel: { a: 'b' } } } },
      'AlwaysPullImages: plugins[0].exemptions.objectSelector.matchLabel: unknown field "matchLabel"; did you mean "matchLabels"?',
    ],
    [
      'an empty selector (it would exempt everything)',
      { exemptions: { namespaceSelector: {} } },
      'AlwaysPullImages: plugins[0].exemptions.namespaceSelector: Required value: an exemption selector needs matchLabels or matchExpressions',
    ],
    [
      'a label key that is not a qualified name',
      { exemptions: { namespaceSelector: { matchLabels: { 'bad key': 'x' } } } },
      "AlwaysPullImages: plugins[0].exemptions.namespaceSelector.matchLabels.bad key: Invalid value: \"bad key\": name part must consist of at most 63 alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    ],
    [
      'a label value that is not a label value',
      { exemptions: { objectSelector: { matchLabels: { tier: 'a b' } } } },
      "AlwaysPullImages: plugins[0].exemptions.objectSelector.matchLabels.tier: Invalid value: \"a b\": a valid label must be an empty string or consist of at most 63 alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    ],
    [
      'an operator in the wrong case',
      { exemptions: { objectSelector: { matchExpressions: [{ key: 'a', operator: 'exists' }] } } },
      'AlwaysPullImages: plugins[0].exemptions.objectSelector.matchExpressions[0].operator: Unsupported value: "exists": supported values: "In", "NotIn", "Exists", "DoesNotExist"',
    ],
    [
      'a requirement without an operator',
      { exemptions: { objectSelector: { matchExpressions: [{ key: 'a', values: ['b'] }] } } },
      'AlwaysPullImages: plugins[0].exemptions.objectSelector.matchExpressions[0].operator: Required value',
    ],
    [
      'In without values',
      { exemptions: { objectSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } } },
      "AlwaysPullImages: plugins[0].exemptions.objectSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
    ],
    [
      'Exists with values',
      { exemptions: { objectSelector: { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['b'] }] } } },
      "AlwaysPullImages: plugins[0].exemptions.objectSelector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
    ],
    [
      'an unknown requirement field',
      { exemptions: { objectSelector: { matchExpressions: [{ key: 'a', operator: 'Exists', value: 'b' }] } } },
      'AlwaysPullImages: plugins[0].exemptions.objectSelector.matchExpressions[0].value: unknown field "value"; did you mean "values"?',
    ],
  ];

  it.each(refused)('refuses %s', (_, fields, message) => {
    expect(configErrorOf(() => parse([{ name: 'AlwaysPullImages', ...fields }])).message).toBe(message);
  });
});

describe('check-config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'enforcement-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('says which plugins warn or audit and which have exemptions', () => {
    const file = join(dir, 'admission.yaml');
    writeFileSync(file, ISSUE_EXAMPLE);
    let stdout = '';
    const code = checkConfigCommand([file], {
      stdout: (t) => {
        stdout += t;
      },
      stderr: () => {},
      env: {},
    });
    expect(code).toBe(0);
    expect(stdout).toContain('ok  AlwaysPullImages (configured, enforcement: Warn, with exemptions)\n');
  });
});
