// Kubernetes' CEL format library (k8s.io/apiserver/pkg/cel/library/format.go), offered to new
// policies from 1.32: `format.dns1123Label().validate(name)` is optional.none() when the string is
// valid, else an optional list of apimachinery's validation messages, word for word.
import { CelScalar, celFunc, celList, celMethod } from '@bufbuild/cel';
import type { CelFunc } from '@bufbuild/cel';
import { OPTIONAL_TYPE, NONE, optionalOf } from './optional.js';
import { NAMED_FORMAT, opaqueText } from './types.js';
import { UrlError, parseRequestURI } from './url.js';

/** apimachinery's validation.RegexError. */
function regexError(message: string, pattern: string, ...examples: string[]): string {
  return `${message} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${pattern}')`;
}
const maxLength = (n: number) => `must be no more than ${n} characters`;

const LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const SUBDOMAIN = `${LABEL}(\\.${LABEL})*`;
const DNS1035 = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QUALIFIED = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE = `(${QUALIFIED})?`;
const whole = (pattern: string) => new RegExp(`^(?:${pattern})$`);
const QUALIFIED_MESSAGE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

function dns1123Label(s: string): string[] {
  const errors: string[] = [];
  if (s.length > 63) errors.push(maxLength(63));
  if (!whole(LABEL).test(s))
    errors.push(
      regexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        LABEL,
        'my-name',
        '123-abc',
      ),
    );
  return errors;
}

function dns1123Subdomain(s: string): string[] {
  const errors: string[] = [];
  if (s.length > 253) errors.push(maxLength(253));
  if (!whole(SUBDOMAIN).test(s))
    errors.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        SUBDOMAIN,
        'example.com',
      ),
    );
  return errors;
}

function dns1035Label(s: string): string[] {
  const errors: string[] = [];
  if (s.length > 63) errors.push(maxLength(63));
  if (!whole(DNS1035).test(s))
    errors.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035,
        'my-name',
        'abc-123',
      ),
    );
  return errors;
}

function qualifiedName(s: string): string[] {
  const parts = s.split('/');
  let name = parts[0];
  const errors: string[] = [];
  if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (prefix.length === 0) errors.push('prefix part must be non-empty');
    else errors.push(...dns1123Subdomain(prefix).map((e) => `prefix part ${e}`));
  } else if (parts.length > 2) {
    return [
      `a qualified name ${regexError(QUALIFIED_MESSAGE, QUALIFIED, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errors.push('name part must be non-empty');
  else if (name.length > 63) errors.push(`name part ${maxLength(63)}`);
  if (name.length > 0 && !whole(QUALIFIED).test(name))
    errors.push(`name part ${regexError(QUALIFIED_MESSAGE, QUALIFIED, 'MyName', 'my.name', '123-abc')}`);
  return errors;
}

function labelValue(s: string): string[] {
  const errors: string[] = [];
  if (s.length > 63) errors.push(maxLength(63));
  if (!whole(LABEL_VALUE).test(s))
    errors.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  return errors;
}

/** apimachinery's NameIs* with prefix: a trailing dash is masked, as upstream does. */
const prefixed = (check: (s: string) => string[]) => (s: string) =>
  check(s.length > 1 && s.endsWith('-') ? `${s.slice(0, -2)}a` : s);

function validDate(year: number, month: number, day: number): boolean {
  const d = new Date(Date.UTC(year, month - 1, day));
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

export const FORMATS: Record<string, (s: string) => string[]> = {
  dns1123Label,
  dns1123Subdomain,
  dns1035Label,
  qualifiedName,
  dns1123LabelPrefix: prefixed(dns1123Label),
  dns1123SubdomainPrefix: prefixed(dns1123Subdomain),
  dns1035LabelPrefix: prefixed(dns1035Label),
  labelValue,
  // Go's url.ParseRequestURI (url.ts), its error as the message.
  uri: (s) => {
    try {
      parseRequestURI(s);
      return [];
    } catch (error) {
      if (error instanceof UrlError) return [error.message];
      throw error;
    }
  },
  uuid: (s) =>
    /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})$/i.test(s)
      ? []
      : ['does not match the UUID format'],
  byte: (s) =>
    /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s.replace(/[\r\n]/g, ''))
      ? []
      : ['invalid base64'],
  date: (s) => {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
    return m && validDate(Number(m[1]), Number(m[2]), Number(m[3])) ? [] : ['invalid date'];
  },
  datetime: (s) => {
    const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/.exec(s);
    const ok =
      m &&
      validDate(Number(m[1]), Number(m[2]), Number(m[3])) &&
      Number(m[4]) < 24 &&
      Number(m[5]) < 60 &&
      Number(m[6]) < 60 &&
      (m[7] === undefined || (Number(m[7]) < 24 && Number(m[8]) < 60));
    return ok ? [] : ['invalid datetime'];
  },
};

const { STRING } = CelScalar;

export const formatLibrary: CelFunc[] = [
  ...Object.keys(FORMATS).map((name) =>
    celFunc(`format.${name}`, [], NAMED_FORMAT.type, () => NAMED_FORMAT.wrap(name) as never),
  ),
  celFunc(
    'format.named',
    [STRING],
    OPTIONAL_TYPE,
    (name) => (name in FORMATS ? optionalOf(NAMED_FORMAT.wrap(name)) : NONE) as never,
  ),
  celMethod('validate', NAMED_FORMAT.type, [STRING], OPTIONAL_TYPE, function (text) {
    const errors = FORMATS[opaqueText(this)](text);
    return (errors.length === 0 ? NONE : optionalOf(celList(errors))) as never;
  }),
];
