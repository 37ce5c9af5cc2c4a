// Kubernetes' CEL semver library (k8s.io/apiserver/pkg/cel/library/semverlib.go): strict Semantic
// Versioning 2.0.0, or with `normalize` a leading `v`, missing minor/patch and leading zeros.
import { CelScalar, celFunc, celMethod } from '@bufbuild/cel';
import type { CelFunc } from '@bufbuild/cel';
import { SEMVER, opaqueText } from './types.js';

const { BOOL, INT, STRING } = CelScalar;
const IDENT = '(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)';
const STRICT = new RegExp(
  `^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)(?:-(${IDENT}(?:\\.${IDENT})*))?(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$`,
);

interface Version {
  major: bigint;
  minor: bigint;
  patch: bigint;
  pre: string[];
}

function normalized(text: string): string {
  const m = /^v?([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(.*)$/.exec(text);
  if (!m) return text;
  const n = (s: string | undefined) => String(BigInt(s ?? '0'));
  return `${n(m[1])}.${n(m[2])}.${n(m[3])}${m[4]}`;
}

/** blang/semver's first complaint about a version that does not parse. */
function complaint(text: string): string {
  if (text === '') return 'Version string empty';
  const parts = text.split('.');
  if (parts.length < 3) return 'No Major.Minor.Patch elements found';
  const [major, minor] = parts;
  for (const [name, part] of [
    ['major', major],
    ['minor', minor],
  ] as const) {
    if (!/^[0-9]+$/.test(part)) return `Invalid character(s) found in ${name} number ${JSON.stringify(part)}`;
    if (part.length > 1 && part.startsWith('0'))
      return `${name[0].toUpperCase()}${name.slice(1)} number must not contain leading zeroes ${JSON.stringify(part)}`;
  }
  return `invalid semver: ${JSON.stringify(text)}`;
}

function parse(text: string, normalize = false): Version {
  const candidate = normalize ? normalized(text) : text;
  const m = STRICT.exec(candidate);
  if (!m) throw new Error(complaint(candidate));
  return { major: BigInt(m[1]), minor: BigInt(m[2]), patch: BigInt(m[3]), pre: m[4] ? m[4].split('.') : [] };
}

function comparePre(a: string[], b: string[]): number {
  if (a.length === 0 || b.length === 0) return b.length - a.length; // a release sorts after its pre-releases
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const [x, y] = [a[i], b[i]];
    const [xn, yn] = [/^[0-9]+$/.test(x), /^[0-9]+$/.test(y)];
    if (x === y) continue;
    if (xn && yn) return BigInt(x) < BigInt(y) ? -1 : 1;
    if (xn !== yn) return xn ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

function compare(a: Version, b: Version): number {
  for (const k of ['major', 'minor', 'patch'] as const) if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  return Math.sign(comparePre(a.pre, b.pre));
}

const versionOf = (value: unknown) => parse(opaqueText(value));
const wrap = (text: string, normalize: boolean) => {
  parse(text, normalize);
  return SEMVER.wrap(normalize ? normalized(text) : text) as never;
};
const valid = (text: string, normalize: boolean) => {
  try {
    parse(text, normalize);
    return true;
  } catch {
    return false;
  }
};

export const semverLibrary: CelFunc[] = [
  celFunc('semver', [STRING], SEMVER.type, (text) => wrap(text, false)),
  celFunc('semver', [STRING, BOOL], SEMVER.type, (text, normalize) => wrap(text, normalize)),
  celFunc('isSemver', [STRING], BOOL, (text) => valid(text, false)),
  celFunc('isSemver', [STRING, BOOL], BOOL, (text, normalize) => valid(text, normalize)),
  celMethod('major', SEMVER.type, [], INT, function () {
    return versionOf(this).major;
  }),
  celMethod('minor', SEMVER.type, [], INT, function () {
    return versionOf(this).minor;
  }),
  celMethod('patch', SEMVER.type, [], INT, function () {
    return versionOf(this).patch;
  }),
  celMethod('isGreaterThan', SEMVER.type, [SEMVER.type], BOOL, function (o) {
    return compare(versionOf(this), versionOf(o)) > 0;
  }),
  celMethod('isLessThan', SEMVER.type, [SEMVER.type], BOOL, function (o) {
    return compare(versionOf(this), versionOf(o)) < 0;
  }),
  celMethod('compareTo', SEMVER.type, [SEMVER.type], INT, function (o) {
    return BigInt(compare(versionOf(this), versionOf(o)));
  }),
];
