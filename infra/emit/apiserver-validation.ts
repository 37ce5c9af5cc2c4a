// The kube-apiserver's own validation of a webhook configuration it is asked to create
// (k8s.io/kubernetes pkg/apis/admissionregistration/validation: ValidateValidatingWebhookConfiguration
// and ValidateMutatingWebhookConfiguration, as the v1 API calls them), ported so that the emitter
// can refuse to print what `kubectl apply` would be refused, in the apiserver's own words:
//
//   webhooks[0].rules[0].resources: Invalid value: ["*","*/*"]: if '*/*' is present, must not specify other resources
//
// Ported: metadata (name, generateName, namespace, labels, annotations), webhook names (fully
// qualified, unique), rules (operations, apiGroups, apiVersions, resources and subresources with their
// wildcards, scope), failurePolicy, matchPolicy, sideEffects, timeoutSeconds, namespaceSelector and
// objectSelector (ValidateLabelSelector), reinvocationPolicy, clientConfig (url or service, and
// webhook.ValidateWebhookURL / ValidateWebhookService), matchConditions (count, names, uniqueness and
// the expression compiled in the webhook environment) and admissionReviewVersions. Not ported: the
// CEL cost estimate of a match condition (StrictCostEnforcementForWebhooks), and caBundle, which the
// apiserver does not validate at creation either.
import { compileExpression, CelCompileError } from '../../lib/cel/compile.js';
import type { FieldError } from '../../lib/admission/field.js';
import {
  FieldPath,
  fieldErrorMessage,
  forbiddenField,
  invalid,
  notSupported,
  required,
} from '../../lib/admission/field.js';

// --- apimachinery's string validators (api/validate/content, util/validation), with their texts ------

const regexError = (message: string, format: string, ...examples: string[]) =>
  examples.length === 0
    ? `${message} (regex used for validation is '${format}')`
    : `${message} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${format}')`;
const maxLenError = (length: number) => `must be no more than ${length} characters`;
const EMPTY_ERROR = 'must be non-empty';

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_LABEL = new RegExp(`^${DNS1035_LABEL_FMT}$`);
const LABEL_KEY_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_KEY_NAME = new RegExp(`^${LABEL_KEY_FMT}$`);
const LABEL_KEY_MESSAGE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** Go measures strings in bytes. */
const byteLength = (value: string) => Buffer.byteLength(value, 'utf8');

function isDns1123Subdomain(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > 253) errors.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN.test(value)) {
    const message =
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
    errors.push(regexError(message, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  }
  return errors;
}

function isDns1035Label(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > 63) errors.push(maxLenError(63));
  if (!DNS1035_LABEL.test(value)) {
    const message =
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
    errors.push(regexError(message, DNS1035_LABEL_FMT, 'my-name', 'abc-123'));
  }
  return errors;
}

/** content.IsLabelKey (validation.IsQualifiedName). */
function isQualifiedName(value: string): string[] {
  const errors: string[] = [];
  const slash = value.indexOf('/');
  let name = value;
  if (slash >= 0) {
    const prefix = value.slice(0, slash);
    name = value.slice(slash + 1);
    if (name.includes('/')) {
      return [
        `a valid label key ${regexError(LABEL_KEY_MESSAGE, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
      ];
    }
    if (prefix === '') errors.push(`prefix part ${EMPTY_ERROR}`);
    else errors.push(...isDns1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  }
  if (name === '') errors.push(`name part ${EMPTY_ERROR}`);
  else if (byteLength(name) > 63) errors.push(`name part ${maxLenError(63)}`);
  if (!LABEL_KEY_NAME.test(name))
    errors.push(`name part ${regexError(LABEL_KEY_MESSAGE, LABEL_KEY_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errors;
}

/** content.IsLabelValue. */
function isLabelValue(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > 63) errors.push(maxLenError(63));
  if (value !== '' && !LABEL_KEY_NAME.test(value)) {
    const message =
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
    errors.push(regexError(message, `(${LABEL_KEY_FMT})?`, 'MyValue', 'my_value', '12345'));
  }
  return errors;
}

/** validation.IsFullyQualifiedName: a webhook's name. */
function fullyQualifiedName(path: FieldPath, name: string): FieldError[] {
  if (name === '') return [required(path, '')];
  const subdomain = isDns1123Subdomain(name);
  if (subdomain.length > 0) return [invalid(path, name, subdomain.join(','))];
  if (name.split('.').length < 3)
    return [invalid(path, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

// --- field errors the shared module has no constructor for ---------------------------------------

const duplicate = (path: FieldPath, value: unknown): FieldError => ({
  type: 'Duplicate value',
  field: String(path),
  badValue: value,
  detail: '',
});
const tooMany = (path: FieldPath, actual: number, max: number): FieldError => ({
  type: 'Too many',
  field: String(path),
  badValue: actual,
  detail: `must have at most ${max} ${max === 1 ? 'item' : 'items'}`,
});
/** field.TooLong prints no value. */
const tooLongMessage = (path: FieldPath, max: number) => `${path}: Too long: may not be more than ${max} bytes`;

// --- reading the decoded object defensively: anything may be missing or mistyped -------------------

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const objectAt = (value: unknown): Json => (isObject(value) ? value : {});
const listAt = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const stringAt = (value: unknown): string => (typeof value === 'string' ? value : '');
const stringMap = (value: unknown): [string, string][] =>
  Object.entries(objectAt(value)).map(([k, v]) => [k, typeof v === 'string' ? v : String(v)]);
/** Go's sets.NewString(...).List(): sorted. */
const sorted = (values: readonly string[]) => [...values].sort();

// --- metav1 validation -------------------------------------------------------------------------------

/** ValidateLabels: each key a qualified name, each value a label value, all at the map's path. */
function validateLabels(labels: unknown, path: FieldPath): FieldError[] {
  return stringMap(labels).flatMap(([key, value]) => [
    ...isQualifiedName(key).map((m) => invalid(path, key, m)),
    ...isLabelValue(value).map((m) => invalid(path, value, m)),
  ]);
}

/** metav1validation.ValidateLabelSelector, without AllowInvalidLabelValueInSelector. */
function validateLabelSelector(selector: unknown, path: FieldPath): FieldError[] {
  if (selector === undefined || selector === null) return [];
  const s = objectAt(selector);
  const errors = validateLabels(s.matchLabels, path.child('matchLabels'));
  listAt(s.matchExpressions).forEach((raw, i) => {
    const at = path.child('matchExpressions').index(i);
    const requirement = objectAt(raw);
    const values = listAt(requirement.values).map(stringAt);
    switch (requirement.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0)
          errors.push(required(at.child('values'), "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0)
          errors.push(
            forbiddenField(at.child('values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
          );
        break;
      default:
        errors.push(invalid(at.child('operator'), stringAt(requirement.operator), 'not a valid selector operator'));
    }
    const key = stringAt(requirement.key);
    errors.push(...isQualifiedName(key).map((m) => invalid(at.child('key'), key, m)));
    values.forEach((value, v) => {
      errors.push(...isLabelValue(value).map((m) => invalid(at.child('values').index(v), value, m)));
    });
  });
  return errors;
}

const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/** ValidateObjectMeta for a cluster-scoped object named by NameIsDNSSubdomain. */
function objectMetaViolations(metadata: unknown): string[] {
  const meta = objectAt(metadata);
  const path = FieldPath.of('metadata');
  const errors: FieldError[] = [];
  const generateName = stringAt(meta.generateName);
  if (generateName !== '') {
    // maskTrailingDash: a prefix may end in '-'.
    const masked =
      generateName.length > 1 && generateName.endsWith('-') ? `${generateName.slice(0, -1)}a` : generateName;
    errors.push(...isDns1123Subdomain(masked).map((m) => invalid(path.child('generateName'), generateName, m)));
  }
  const name = stringAt(meta.name);
  if (name === '') errors.push(required(path.child('name'), 'name or generateName is required'));
  else errors.push(...isDns1123Subdomain(name).map((m) => invalid(path.child('name'), name, m)));
  if (stringAt(meta.namespace) !== '') errors.push(forbiddenField(path.child('namespace'), 'not allowed on this type'));
  errors.push(...validateLabels(meta.labels, path.child('labels')));
  const annotations = stringMap(meta.annotations);
  for (const [key] of annotations) {
    // QualifiedName, except that case does not matter.
    errors.push(...isQualifiedName(key.toLowerCase()).map((m) => invalid(path.child('annotations'), key, m)));
  }
  const messages = errors.map(fieldErrorMessage);
  const size = annotations.reduce((total, [k, v]) => total + byteLength(k) + byteLength(v), 0);
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT)
    messages.push(tooLongMessage(path.child('annotations'), TOTAL_ANNOTATION_SIZE_LIMIT));
  return messages;
}

// --- rules ---------------------------------------------------------------------------------------

const SUPPORTED_OPERATIONS = sorted(['*', 'CREATE', 'UPDATE', 'DELETE', 'CONNECT']);
const VALID_SCOPES = sorted(['Cluster', 'Namespaced', '*']);

/** validateResources (subresources allowed, as in webhook rules). */
function validateResources(resources: readonly string[], path: FieldPath): FieldError[] {
  const errors: FieldError[] = [];
  if (resources.length === 0) errors.push(required(path, ''));
  const withWildcardSubresource = new Set<string>(); // x/*
  const withWildcardResource = new Set<string>(); // */x
  let doubleWildcard = false; // */*
  let singleWildcard = false; // *
  let withoutSubresource = false; // x
  resources.forEach((resSub, i) => {
    if (resSub === '') {
      errors.push(required(path.index(i), ''));
      return;
    }
    if (resSub === '*/*') doubleWildcard = true;
    if (resSub === '*') singleWildcard = true;
    const slash = resSub.indexOf('/');
    if (slash < 0) {
      // Upstream keeps the last plain entry's answer, not whether any was plain.
      withoutSubresource = resSub !== '*';
      return;
    }
    const [res, sub] = [resSub.slice(0, slash), resSub.slice(slash + 1)];
    if (withWildcardSubresource.has(res))
      errors.push(invalid(path.index(i), resSub, `if '${res}/*' is present, must not specify ${resSub}`));
    if (withWildcardResource.has(sub))
      errors.push(invalid(path.index(i), resSub, `if '*/${sub}' is present, must not specify ${resSub}`));
    if (sub === '*') withWildcardSubresource.add(res);
    if (res === '*') withWildcardResource.add(sub);
  });
  if (resources.length > 1 && doubleWildcard)
    errors.push(invalid(path, resources, "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && withoutSubresource)
    errors.push(invalid(path, resources, "if '*' is present, must not specify other resources without subresources"));
  return errors;
}

function validateRuleWithOperations(raw: unknown, path: FieldPath): FieldError[] {
  const rule = objectAt(raw);
  const errors: FieldError[] = [];
  const operations = listAt(rule.operations).map(stringAt);
  if (operations.length === 0) errors.push(required(path.child('operations'), ''));
  if (operations.length > 1 && operations.includes('*'))
    errors.push(invalid(path.child('operations'), operations, "if '*' is present, must not specify other operations"));
  operations.forEach((op, i) => {
    if (!SUPPORTED_OPERATIONS.includes(op))
      errors.push(notSupported(path.child('operations').index(i), op, SUPPORTED_OPERATIONS));
  });
  const groups = listAt(rule.apiGroups).map(stringAt);
  if (groups.length === 0) errors.push(required(path.child('apiGroups'), ''));
  if (groups.length > 1 && groups.includes('*'))
    errors.push(invalid(path.child('apiGroups'), groups, "if '*' is present, must not specify other API groups"));
  // A group may be empty: the legacy core group.
  const versions = listAt(rule.apiVersions).map(stringAt);
  if (versions.length === 0) errors.push(required(path.child('apiVersions'), ''));
  if (versions.length > 1 && versions.includes('*'))
    errors.push(invalid(path.child('apiVersions'), versions, "if '*' is present, must not specify other API versions"));
  versions.forEach((version, i) => {
    if (version === '') errors.push(required(path.child('apiVersions').index(i), ''));
  });
  errors.push(...validateResources(listAt(rule.resources).map(stringAt), path.child('resources')));
  if (rule.scope !== undefined && rule.scope !== null && !VALID_SCOPES.includes(stringAt(rule.scope)))
    errors.push(notSupported(path.child('scope'), rule.scope, VALID_SCOPES));
  return errors;
}

// --- clientConfig ----------------------------------------------------------------------------------

interface GoUrl {
  scheme: string;
  /** userinfo as url.User.String() gives it; undefined when the URL has none. */
  user?: string;
  host: string;
  rawQuery: string;
  fragment: string;
}

/** Go's stringContainsCTLByte: a byte below 0x20, or 0x7f. */
const hasControlByte = (value: string) => [...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})(.{0,2})/;

/** Go's url.Parse, as far as ValidateWebhookURL reads it: the error text, or the parts. */
function parseGoUrl(raw: string): GoUrl | { error: string } {
  const hash = raw.indexOf('#');
  const [main, fragment] = hash < 0 ? [raw, ''] : [raw.slice(0, hash), raw.slice(hash + 1)];
  const fail = (input: string, reason: string) => ({ error: `parse ${JSON.stringify(input)}: ${reason}` });
  if (hasControlByte(main)) return fail(main, 'net/url: invalid control character in URL');
  let scheme = '';
  let rest = main;
  for (let i = 0; i < main.length; i++) {
    const c = main[i];
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+.-]/.test(c)) {
      if (i === 0) break;
      continue;
    }
    if (c === ':') {
      if (i === 0) return fail(main, 'missing protocol scheme');
      scheme = main.slice(0, i).toLowerCase();
      rest = main.slice(i + 1);
    }
    break;
  }
  let rawQuery = '';
  if (rest.endsWith('?') && rest.split('?').length === 2) rest = rest.slice(0, -1);
  else if (rest.includes('?')) [rest, rawQuery] = [rest.slice(0, rest.indexOf('?')), rest.slice(rest.indexOf('?') + 1)];
  const url: GoUrl = { scheme, host: '', rawQuery, fragment: '' };
  if (!rest.startsWith('/')) {
    // A rootless path after a scheme is opaque; without a scheme a colon in the first segment is refused.
    if (scheme === '' && rest.split('/')[0].includes(':'))
      return fail(main, 'first path segment in URL cannot contain colon');
  } else if (rest.startsWith('//') && (scheme !== '' || !rest.startsWith('///'))) {
    let authority = rest.slice(2);
    const slash = authority.indexOf('/');
    if (slash >= 0) authority = authority.slice(0, slash);
    const at = authority.lastIndexOf('@');
    if (at >= 0) url.user = authority.slice(0, at);
    const host = authority.slice(at + 1);
    const colon = host.lastIndexOf(':');
    const port = colon >= 0 && !host.slice(colon).includes(']') ? host.slice(colon) : '';
    if (port !== '' && !/^:[0-9]*$/.test(port)) return fail(main, `invalid port ${JSON.stringify(port)} after host`);
    const badHostEscape = BAD_ESCAPE.exec(host);
    if (badHostEscape) return fail(main, `invalid URL escape ${JSON.stringify(badHostEscape[0])}`);
    url.host = host;
  }
  const badFragment = BAD_ESCAPE.exec(fragment);
  if (badFragment) return fail(raw, `invalid URL escape ${JSON.stringify(badFragment[0])}`);
  url.fragment = decodeURIComponent(fragment);
  return url;
}

const URL_FORM = '; desired format: https://host[/path]';

/** webhook.ValidateWebhookURL with forceHttps. */
function validateWebhookUrl(path: FieldPath, raw: string): FieldError[] {
  const url = parseGoUrl(raw);
  if ('error' in url) return [required(path, `url must be a valid URL: ${url.error}${URL_FORM}`)];
  const errors: FieldError[] = [];
  if (url.scheme !== 'https')
    errors.push(invalid(path, url.scheme, `'https' is the only allowed URL scheme${URL_FORM}`));
  if (url.host === '') errors.push(invalid(path, url.host, `host must be specified${URL_FORM}`));
  if (url.user !== undefined) errors.push(invalid(path, url.user, 'user information is not permitted in the URL'));
  if (url.fragment !== '') errors.push(invalid(path, url.fragment, 'fragments are not permitted in the URL'));
  if (url.rawQuery !== '') errors.push(invalid(path, url.rawQuery, 'query parameters are not permitted in the URL'));
  return errors;
}

/**
 * webhook.ValidateWebhookService. Upstream's callers pass the service's name where the function
 * takes the namespace and the other way round, so a missing namespace is reported at `.name` and a
 * missing name at `.namespace`: kept, since these are the words the apiserver answers.
 */
function validateWebhookService(path: FieldPath, service: Json): FieldError[] {
  const errors: FieldError[] = [];
  const [namespaceArgument, nameArgument] = [stringAt(service.name), stringAt(service.namespace)];
  if (nameArgument === '') errors.push(required(path.child('name'), ''));
  if (namespaceArgument === '') errors.push(required(path.child('namespace'), ''));
  // v1 defaults the port to 443.
  const port = typeof service.port === 'number' ? service.port : 443;
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    errors.push(invalid(path.child('port'), port, 'port is not valid: must be between 1 and 65535, inclusive'));
  if (typeof service.path !== 'string') return errors;
  const urlPath = service.path;
  if (urlPath === '/' || urlPath === '') return errors;
  if (urlPath === '//') return [...errors, invalid(path.child('path'), urlPath, 'segment[0] may not be empty')];
  if (!urlPath.startsWith('/')) errors.push(invalid(path.child('path'), urlPath, "must start with a '/'"));
  let toCheck = urlPath.slice(1);
  if (toCheck.endsWith('/')) toCheck = toCheck.slice(0, -1);
  toCheck.split('/').forEach((step, i) => {
    if (step === '') errors.push(invalid(path.child('path'), urlPath, `segment[${i}] may not be empty`));
    else
      for (const failure of isDns1123Subdomain(step))
        errors.push(invalid(path.child('path'), urlPath, `segment[${i}]: ${failure}`));
  });
  return errors;
}

function validateClientConfig(raw: unknown, path: FieldPath): FieldError[] {
  const config = objectAt(raw);
  const hasUrl = typeof config.url === 'string';
  const hasService = isObject(config.service);
  if (hasUrl === hasService) return [required(path, 'exactly one of url or service is required')];
  return hasUrl
    ? validateWebhookUrl(path.child('url'), config.url as string)
    : validateWebhookService(path.child('service'), config.service as Json);
}

// --- matchConditions ---------------------------------------------------------------------------------

const MAX_MATCH_CONDITIONS = 64;

/** The expression compiled as the apiserver compiles a new webhook match condition (no params). */
function validateMatchConditionExpression(expression: string, path: FieldPath): FieldError[] {
  try {
    compileExpression(expression, { variables: new Set(), role: 'matchCondition', params: false });
    return [];
  } catch (error) {
    if (error instanceof CelCompileError) return [invalid(path, expression, error.detail)];
    throw error;
  }
}

function validateMatchConditions(raw: unknown, path: FieldPath): FieldError[] {
  const conditions = listAt(raw).map(objectAt);
  const errors: FieldError[] = [];
  if (conditions.length > MAX_MATCH_CONDITIONS) errors.push(tooMany(path, conditions.length, MAX_MATCH_CONDITIONS));
  const names = new Set<string>();
  conditions.forEach((condition, i) => {
    const at = path.index(i);
    const expression = stringAt(condition.expression).trim();
    if (expression === '') errors.push(required(at.child('expression'), ''));
    else errors.push(...validateMatchConditionExpression(expression, at.child('expression')));
    const name = stringAt(condition.name);
    if (name === '') errors.push(required(at.child('name'), ''));
    else errors.push(...isQualifiedName(name).map((m) => invalid(at.child('name'), name, m)));
    if (name !== '') {
      if (names.has(name)) errors.push(duplicate(at.child('name'), name));
      else names.add(name);
    }
  });
  return errors;
}

// --- one webhook, and the configuration ----------------------------------------------------------

const FAILURE_POLICIES = sorted(['Ignore', 'Fail']);
const MATCH_POLICIES = sorted(['Exact', 'Equivalent']);
/** requireNoSideEffects: what a new configuration may declare. */
const NO_SIDE_EFFECT_CLASSES = sorted(['None', 'NoneOnDryRun']);
const REINVOCATION_POLICIES = sorted(['Never', 'IfNeeded']);
const ACCEPTED_ADMISSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];

const isSet = (value: unknown) => value !== undefined && value !== null;

function validateWebhook(webhook: Json, mutating: boolean, path: FieldPath): FieldError[] {
  const errors = fullyQualifiedName(path.child('name'), stringAt(webhook.name));
  listAt(webhook.rules).forEach((rule, i) => {
    errors.push(...validateRuleWithOperations(rule, path.child('rules').index(i)));
  });
  if (isSet(webhook.failurePolicy) && !FAILURE_POLICIES.includes(stringAt(webhook.failurePolicy)))
    errors.push(notSupported(path.child('failurePolicy'), webhook.failurePolicy, FAILURE_POLICIES));
  if (isSet(webhook.matchPolicy) && !MATCH_POLICIES.includes(stringAt(webhook.matchPolicy)))
    errors.push(notSupported(path.child('matchPolicy'), webhook.matchPolicy, MATCH_POLICIES));
  if (!isSet(webhook.sideEffects))
    errors.push(required(path.child('sideEffects'), `must specify one of ${NO_SIDE_EFFECT_CLASSES.join(', ')}`));
  else if (!NO_SIDE_EFFECT_CLASSES.includes(stringAt(webhook.sideEffects)))
    errors.push(notSupported(path.child('sideEffects'), webhook.sideEffects, NO_SIDE_EFFECT_CLASSES));
  if (isSet(webhook.timeoutSeconds)) {
    const timeout = webhook.timeoutSeconds as number;
    if (!(timeout >= 1 && timeout <= 30))
      errors.push(invalid(path.child('timeoutSeconds'), timeout, 'the timeout value must be between 1 and 30 seconds'));
  }
  errors.push(...validateLabelSelector(webhook.namespaceSelector, path.child('namespaceSelector')));
  errors.push(...validateLabelSelector(webhook.objectSelector, path.child('objectSelector')));
  if (
    mutating &&
    isSet(webhook.reinvocationPolicy) &&
    !REINVOCATION_POLICIES.includes(stringAt(webhook.reinvocationPolicy))
  )
    errors.push(notSupported(path.child('reinvocationPolicy'), webhook.reinvocationPolicy, REINVOCATION_POLICIES));
  errors.push(...validateClientConfig(webhook.clientConfig, path.child('clientConfig')));
  errors.push(...validateMatchConditions(webhook.matchConditions, path.child('matchConditions')));
  return errors;
}

/** validateAdmissionReviewVersions with requireRecognizedAdmissionReviewVersion. */
function validateAdmissionReviewVersions(raw: unknown, path: FieldPath): FieldError[] {
  const versions = listAt(raw).map(stringAt);
  if (versions.length === 0)
    return [required(path, `must specify one of ${ACCEPTED_ADMISSION_REVIEW_VERSIONS.join(', ')}`)];
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  versions.forEach((version, i) => {
    if (seen.has(version)) {
      errors.push(invalid(path.index(i), version, 'duplicate version'));
      return;
    }
    seen.add(version);
    errors.push(...isDns1035Label(version).map((m) => invalid(path.index(i), version, m)));
  });
  if (!versions.some((v) => ACCEPTED_ADMISSION_REVIEW_VERSIONS.includes(v)))
    errors.push(
      invalid(path, versions, `must include at least one of ${ACCEPTED_ADMISSION_REVIEW_VERSIONS.join(', ')}`),
    );
  return errors;
}

/**
 * What the apiserver answers `kubectl apply` of this Mutating- or ValidatingWebhookConfiguration
 * (admissionregistration.k8s.io/v1, created): one field error per violation, in its words and
 * order; [] when it would be accepted.
 */
/**
 * What the apiserver refuses in a ValidatingAdmissionPolicy's or MutatingAdmissionPolicy's
 * spec.matchConstraints.resourceRules (NamedRuleWithOperations: a RuleWithOperations with
 * resourceNames), in its words: the rules' checks are the webhooks' own.
 */
export function policyResourceRuleViolations(policy: object): string[] {
  const spec = objectAt((policy as { spec?: unknown }).spec);
  const path = FieldPath.of('spec').child('matchConstraints').child('resourceRules');
  const rules = listAt(objectAt(spec.matchConstraints).resourceRules);
  return rules.flatMap((rule, i) => validateRuleWithOperations(rule, path.index(i)).map(fieldErrorMessage));
}

export function apiserverViolations(configuration: object): string[] {
  const doc = objectAt(configuration);
  const mutating = doc.kind === 'MutatingWebhookConfiguration';
  const messages = objectMetaViolations(doc.metadata);
  const names = new Set<string>();
  listAt(doc.webhooks).forEach((raw, i) => {
    const webhook = objectAt(raw);
    const path = FieldPath.of('webhooks').index(i);
    const errors = [
      ...validateWebhook(webhook, mutating, path),
      ...validateAdmissionReviewVersions(webhook.admissionReviewVersions, path.child('admissionReviewVersions')),
    ];
    const name = stringAt(webhook.name);
    if (name !== '') {
      if (names.has(name)) errors.push(duplicate(path.child('name'), name));
      else names.add(name);
    }
    messages.push(...errors.map(fieldErrorMessage));
  });
  return messages;
}
