// Kubernetes' CEL ip, cidr and url libraries (k8s.io/apiserver/pkg/cel/library/{ip,cidr,urls}.go);
// URLs are parsed as Go's net/url parses them (url.ts).
// Addresses are parsed by lib/kube/net (Go's netip.ParseAddr, which the ExternalIPRanger plugin's
// sloppy parser shares); upstream then refuses zones and IPv4-mapped IPv6 addresses.
import { CelScalar, celFunc, celMethod, mapType, listType } from '@bufbuild/cel';
import type { CelFunc } from '@bufbuild/cel';
import { AddrError, is4In6, parseAddr, parsePrefix as parseNetPrefix } from '../../kube/net.js';
import { CIDR_TYPE, IP_TYPE, URL_TYPE, opaqueText } from './types.js';
import { UrlError, escapedPath, hostname, parseRequestURI, parseURL, port, query } from './url.js';
import type { GoUrl } from './url.js';

const { BOOL, INT, STRING } = CelScalar;

interface Address {
  readonly family: 4 | 6;
  readonly bits: bigint;
}
const width = (family: 4 | 6) => (family === 4 ? 32 : 128);

/** k8s.io/apiserver/pkg/cel/library/ip.go parseIPAddr: netip.ParseAddr (lib/kube/net), no zone, no 4-in-6. */
function parseAddress(text: string): Address {
  let addr;
  try {
    addr = parseAddr(text);
  } catch (error) {
    if (error instanceof AddrError)
      throw new Error(`IP Address ${JSON.stringify(text)} parse error during conversion from string: ${error.message}`);
    throw error;
  }
  if (addr.zone !== '') throw new Error(`IP address ${JSON.stringify(text)} with zone value is not allowed`);
  if (is4In6(addr)) throw new Error(`IPv4-mapped IPv6 address ${JSON.stringify(text)} is not allowed`);
  return { family: addr.family, bits: bitsOf(addr.bytes) };
}

/** RFC 5952 text: lower case, the longest run (2+) of zero groups compressed. */
function formatAddress({ family, bits }: Address): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((bits >> s) & 0xffn)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => (bits >> BigInt(112 - 16 * i)) & 0xffffn);
  let best = -1,
    bestLength = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0n) j++;
    if (j - i > bestLength) [best, bestLength] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLength).join(':')}`;
}

interface Prefix {
  readonly address: Address;
  readonly length: number;
}

const bitsOf = (bytes: Uint8Array) => bytes.reduce((acc, b) => (acc << 8n) | BigInt(b), 0n);

/** cidr.go parseCIDR: netip.ParsePrefix (lib/kube/net), no 4-in-6. */
function parsePrefix(text: string): Prefix {
  let prefix;
  try {
    prefix = parseNetPrefix(text);
  } catch (error) {
    throw new Error(`network address parse error during conversion from string: ${(error as Error).message}`);
  }
  if (is4In6(prefix.addr)) throw new Error(`IPv4-mapped IPv6 address ${JSON.stringify(text)} is not allowed`);
  return { address: { family: prefix.addr.family, bits: bitsOf(prefix.addr.bytes) }, length: prefix.bits };
}

/** `cidr(text)` wraps the parse error once more, as upstream's stringToCIDR does. */
function cidrFromString(text: string): Prefix {
  try {
    return parsePrefix(text);
  } catch (error) {
    throw new Error(`network address parse error during conversion from string: ${(error as Error).message}`);
  }
}

const mask = (family: 4 | 6, length: number) =>
  ((1n << BigInt(width(family))) - 1n) ^ ((1n << BigInt(width(family) - length)) - 1n);
const masked = ({ address, length }: Prefix): Prefix => ({
  address: { family: address.family, bits: address.bits & mask(address.family, length) },
  length,
});
const contains = (prefix: Prefix, address: Address) =>
  prefix.address.family === address.family &&
  (address.bits & mask(address.family, prefix.length)) === (prefix.address.bits & mask(address.family, prefix.length));
const inRange = (address: Address, family: 4 | 6, text: string) =>
  contains(parsePrefix(text), address) && address.family === family;

const ipOf = (value: unknown) => parseAddress(opaqueText(value));
const cidrOf = (value: unknown) => parsePrefix(opaqueText(value));
const wrapIP = (address: Address) => IP_TYPE.wrap(formatAddress(address)) as never;
const wrapCIDR = (prefix: Prefix) => CIDR_TYPE.wrap(`${formatAddress(prefix.address)}/${prefix.length}`) as never;
const succeeds = (f: () => unknown) => {
  try {
    f();
    return true;
  } catch {
    return false;
  }
};

function isGlobalUnicast(a: Address): boolean {
  if (a.bits === 0n || inRange(a, 4, '127.0.0.0/8') || inRange(a, 6, '::1/128')) return false;
  if (inRange(a, 4, '224.0.0.0/4') || inRange(a, 6, 'ff00::/8')) return false;
  if (inRange(a, 4, '169.254.0.0/16') || inRange(a, 6, 'fe80::/10')) return false;
  return !(a.family === 4 && a.bits === 0xffffffffn);
}

export const ipLibrary: CelFunc[] = [
  celFunc('ip', [STRING], IP_TYPE.type, (text) => wrapIP(parseAddress(text))),
  celFunc('isIP', [STRING], BOOL, (text) => succeeds(() => parseAddress(text))),
  celFunc('ip.isCanonical', [STRING], BOOL, (text) => formatAddress(parseAddress(text)) === text),
  celFunc('string', [IP_TYPE.type], STRING, (ip) => opaqueText(ip)),
  celMethod('family', IP_TYPE.type, [], INT, function () {
    return BigInt(ipOf(this).family);
  }),
  celMethod('isUnspecified', IP_TYPE.type, [], BOOL, function () {
    return ipOf(this).bits === 0n;
  }),
  celMethod('isLoopback', IP_TYPE.type, [], BOOL, function () {
    const a = ipOf(this);
    return inRange(a, 4, '127.0.0.0/8') || inRange(a, 6, '::1/128');
  }),
  celMethod('isLinkLocalMulticast', IP_TYPE.type, [], BOOL, function () {
    const a = ipOf(this);
    return inRange(a, 4, '224.0.0.0/24') || inRange(a, 6, 'ff02::/16');
  }),
  celMethod('isLinkLocalUnicast', IP_TYPE.type, [], BOOL, function () {
    const a = ipOf(this);
    return inRange(a, 4, '169.254.0.0/16') || inRange(a, 6, 'fe80::/10');
  }),
  celMethod('isGlobalUnicast', IP_TYPE.type, [], BOOL, function () {
    return isGlobalUnicast(ipOf(this));
  }),
];

export const cidrLibrary: CelFunc[] = [
  celFunc('cidr', [STRING], CIDR_TYPE.type, (text) => wrapCIDR(cidrFromString(text))),
  celFunc('isCIDR', [STRING], BOOL, (text) => succeeds(() => parsePrefix(text))),
  celFunc('string', [CIDR_TYPE.type], STRING, (cidr) => opaqueText(cidr)),
  celMethod('containsIP', CIDR_TYPE.type, [IP_TYPE.type], BOOL, function (ip) {
    return contains(cidrOf(this), ipOf(ip));
  }),
  celMethod('containsIP', CIDR_TYPE.type, [STRING], BOOL, function (ip) {
    return contains(cidrOf(this), parseAddress(ip));
  }),
  celMethod('containsCIDR', CIDR_TYPE.type, [CIDR_TYPE.type], BOOL, function (other) {
    const o = cidrOf(other);
    const p = cidrOf(this);
    return o.length >= p.length && contains(p, o.address);
  }),
  celMethod('containsCIDR', CIDR_TYPE.type, [STRING], BOOL, function (other) {
    const o = parsePrefix(other);
    const p = cidrOf(this);
    return o.length >= p.length && contains(p, o.address);
  }),
  celMethod('ip', CIDR_TYPE.type, [], IP_TYPE.type, function () {
    return wrapIP(cidrOf(this).address);
  }),
  celMethod('masked', CIDR_TYPE.type, [], CIDR_TYPE.type, function () {
    return wrapCIDR(masked(cidrOf(this)));
  }),
  celMethod('prefixLength', CIDR_TYPE.type, [], INT, function () {
    return BigInt(cidrOf(this).length);
  }),
];

/** url(): ParseRequestURI decides, then url.Parse gives the parts (urls.go stringToUrl). */
function urlFromString(text: string): GoUrl {
  try {
    parseRequestURI(text);
    return parseURL(text);
  } catch (error) {
    if (error instanceof UrlError) throw new Error(`URL parse error during conversion from string: ${error.message}`);
    throw error;
  }
}

const urlOf = (value: unknown) => parseURL(opaqueText(value));

export const urlLibrary: CelFunc[] = [
  celFunc('url', [STRING], URL_TYPE.type, (text) => {
    urlFromString(text);
    return URL_TYPE.wrap(text) as never;
  }),
  celFunc('isURL', [STRING], BOOL, (text) => succeeds(() => parseRequestURI(text))),
  celMethod('getScheme', URL_TYPE.type, [], STRING, function () {
    return urlOf(this).scheme;
  }),
  celMethod('getHost', URL_TYPE.type, [], STRING, function () {
    return urlOf(this).host;
  }),
  celMethod('getHostname', URL_TYPE.type, [], STRING, function () {
    return hostname(urlOf(this));
  }),
  celMethod('getPort', URL_TYPE.type, [], STRING, function () {
    return port(urlOf(this));
  }),
  celMethod('getEscapedPath', URL_TYPE.type, [], STRING, function () {
    return escapedPath(urlOf(this));
  }),
  celMethod('getQuery', URL_TYPE.type, [], mapType(STRING, listType(STRING)), function () {
    return query(urlOf(this)) as never;
  }),
];
