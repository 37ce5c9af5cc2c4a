// The project's extensions of an AdmissionConfiguration entry, beside upstream's `name`, `path`
// and `configuration` (which stay upstream's): how the plugin's refusals are enforced, and whose
// requests it never judges. Read strictly, like every configuration here.
import type { LabelSelector, LabelSelectorRequirement } from '../admission/label-selector.js';
import { SELECTOR_OPERATORS, labelKeyProblem, labelValueProblem } from '../admission/label-selector.js';
import { ConfigFields } from './fields.js';

/**
 * Deny: refusals refuse (upstream). Warn: the request is admitted and each refusal becomes a
 * warning with the same message. Audit: admitted, the refusal recorded in an audit annotation.
 */
export type Enforcement = 'Deny' | 'Warn' | 'Audit';
export const ENFORCEMENTS: readonly Enforcement[] = ['Deny', 'Warn', 'Audit'];

/** Requests the plugin never judges: admitted unchanged, with no side effects. */
export interface Exemptions {
  readonly namespaces: readonly string[];
  readonly usernames: readonly string[];
  readonly groups: readonly string[];
  readonly namespaceSelector?: LabelSelector;
  readonly objectSelector?: LabelSelector;
}

export interface PluginEnforcement {
  readonly enforcement: Enforcement;
  readonly exemptions: Exemptions;
}

export const NO_EXEMPTIONS: Exemptions = { namespaces: [], usernames: [], groups: [] };
export const ENFORCE: PluginEnforcement = { enforcement: 'Deny', exemptions: NO_EXEMPTIONS };

const RFC1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function uniqueStrings(f: ConfigFields, key: string, check?: (value: string) => string | undefined): string[] {
  const values = f.strings(key);
  values.forEach((value, i) => {
    if (value === '') throw f.error(`${key}[${i}]`, 'Required value');
    if (values.indexOf(value) !== i) throw f.error(`${key}[${i}]`, `Duplicate value: ${JSON.stringify(value)}`);
    const problem = check?.(value);
    if (problem !== undefined) throw f.error(`${key}[${i}]`, `Invalid value: ${JSON.stringify(value)}: ${problem}`);
  });
  return values;
}

const namespaceNameProblem = (name: string): string | undefined =>
  name.length <= 63 && RFC1123_LABEL.test(name)
    ? undefined
    : "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";

/** metav1validation.ValidateLabelSelector, with this reader's field paths. */
function labelSelector(f: ConfigFields | undefined): LabelSelector | undefined {
  if (!f) return undefined;
  f.allow('matchLabels', 'matchExpressions');
  const matchLabels = f.stringMap('matchLabels');
  for (const [key, value] of Object.entries(matchLabels)) {
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== undefined)
      throw f.error(`matchLabels.${key}`, `Invalid value: ${JSON.stringify(key)}: ${keyProblem}`);
    const valueProblem = labelValueProblem(value);
    if (valueProblem !== undefined)
      throw f.error(`matchLabels.${key}`, `Invalid value: ${JSON.stringify(value)}: ${valueProblem}`);
  }
  const matchExpressions = f.list('matchExpressions').map((e): LabelSelectorRequirement => {
    e.allow('key', 'operator', 'values');
    const key = e.string('key', true) as string;
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== undefined) throw e.error('key', `Invalid value: ${JSON.stringify(key)}: ${keyProblem}`);
    if (!e.has('operator')) throw e.error('operator', 'Required value');
    const operator = e.oneOf('operator', SELECTOR_OPERATORS, 'In');
    const values = e.strings('values');
    const needsValues = operator === 'In' || operator === 'NotIn';
    if (needsValues && values.length === 0)
      throw e.error('values', "Required value: must be specified when `operator` is 'In' or 'NotIn'");
    if (!needsValues && values.length > 0)
      throw e.error('values', "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
    values.forEach((value, i) => {
      const problem = labelValueProblem(value);
      if (problem !== undefined) throw e.error(`values[${i}]`, `Invalid value: ${JSON.stringify(value)}: ${problem}`);
    });
    return { key, operator, ...(values.length > 0 && { values }) };
  });
  // An empty selector selects everything: as an exemption it would switch the plugin off.
  if (Object.keys(matchLabels).length === 0 && matchExpressions.length === 0)
    throw f.error('', 'Required value: an exemption selector needs matchLabels or matchExpressions');
  return {
    ...(Object.keys(matchLabels).length > 0 && { matchLabels }),
    ...(matchExpressions.length > 0 && { matchExpressions }),
  };
}

/**
 * The `enforcement` and `exemptions` of entry `plugins[index]` (`entry` is the whole entry).
 * Absent fields read as Deny and no exemptions; anything else unknown or malformed fails the start.
 */
export function parsePluginEnforcement(
  plugin: string,
  index: number,
  entry: Record<string, unknown>,
): PluginEnforcement {
  const f = new ConfigFields(plugin, `plugins[${index}]`, entry);
  const enforcement = f.oneOf('enforcement', ENFORCEMENTS, 'Deny');
  const e = f.child('exemptions');
  if (!e) return { enforcement, exemptions: NO_EXEMPTIONS };
  e.allow('namespaces', 'usernames', 'groups', 'namespaceSelector', 'objectSelector');
  const namespaceSelector = labelSelector(e.child('namespaceSelector'));
  const objectSelector = labelSelector(e.child('objectSelector'));
  return {
    enforcement,
    exemptions: {
      namespaces: uniqueStrings(e, 'namespaces', namespaceNameProblem),
      usernames: uniqueStrings(e, 'usernames'),
      groups: uniqueStrings(e, 'groups'),
      ...(namespaceSelector && { namespaceSelector }),
      ...(objectSelector && { objectSelector }),
    },
  };
}

/** True when some request is exempt: a name, a user, a group or a selector is given. */
export function hasExemptions(exemptions: Exemptions): boolean {
  return (
    exemptions.namespaces.length + exemptions.usernames.length + exemptions.groups.length > 0 ||
    exemptions.namespaceSelector !== undefined ||
    exemptions.objectSelector !== undefined
  );
}
