// IP addresses and CIDRs, parsed once here for every caller: Go's netip.ParseAddr (strict, with its
// error messages, for Kubernetes' CEL ip/cidr libraries), and k8s.io/utils/net's ParseIPSloppy and
// ParseCIDRSloppy (Go's net package, plus leading zeros in IPv4 octets read as decimal), and
// net.IPNet.Contains as Go answers it: an IPv4 network contains IPv4 addresses (IPv4-mapped IPv6
// included), an IPv6 network only IPv6 ones.

/** 16 bytes; IPv4 addresses in their IPv4-mapped form, as Go's net.IP holds them. */
export type IPBytes = Uint8Array;

export interface IPNet {
  /** Network address, 16 bytes. */
  readonly ip: IPBytes;
  /** True when Go would treat the network as IPv4 (its address is IPv4 or IPv4-mapped). */
  readonly v4: boolean;
  /** Prefix length over the compared bytes: 0-32 for IPv4 networks, 0-128 otherwise. */
  readonly bits: number;
}

/** A parsed address as netip.Addr holds it: 4 bytes for IPv4, 16 for IPv6 (maybe with a zone). */
export interface Addr {
  readonly family: 4 | 6;
  readonly bytes: Uint8Array;
  readonly zone: string;
}

const V4_MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/** netip's parse error: `ParseAddr("in"): message (at "rest")`. */
export class AddrError extends Error {
  override readonly name = 'AddrError';
  constructor(input: string, reason: string, at?: string) {
    super(`ParseAddr(${JSON.stringify(input)}): ${reason}${at ? ` (at ${JSON.stringify(at)})` : ''}`);
  }
}

/** Dotted IPv4 `text[start, end)` into 4 octets; `sloppy` reads leading zeros as decimal (k8s.io/utils/net). */
function ipv4Fields(input: string, start: number, end: number, sloppy: boolean): number[] {
  const text = input.slice(start, end);
  const octets: number[] = [];
  let value = 0;
  let digits = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c >= '0' && c <= '9') {
      if (digits === 1 && value === 0 && !sloppy) throw new AddrError(input, 'IPv4 field has octet with leading zero');
      value = value * 10 + Number(c);
      digits++;
      if (value > 255) throw new AddrError(input, 'IPv4 field has value >255');
    } else if (c === '.') {
      if (i === 0 || i === text.length - 1 || text[i - 1] === '.')
        throw new AddrError(input, 'IPv4 field must have at least one digit', text.slice(i));
      if (octets.length === 3) throw new AddrError(input, 'IPv4 address too long');
      octets.push(value);
      value = 0;
      digits = 0;
    } else throw new AddrError(input, 'unexpected character', text.slice(i));
  }
  if (octets.length < 3) throw new AddrError(input, 'IPv4 address too short');
  octets.push(value);
  return octets;
}

function ipv6(input: string): Addr {
  let rest = input;
  let zone = '';
  const percent = rest.indexOf('%');
  if (percent >= 0) {
    zone = rest.slice(percent + 1);
    rest = rest.slice(0, percent);
    if (zone === '') throw new AddrError(input, 'zone must be a non-empty string');
  }
  const bytes = new Uint8Array(16);
  let ellipsis = -1;
  if (rest.startsWith('::')) {
    ellipsis = 0;
    rest = rest.slice(2);
    if (rest === '') return { family: 6, bytes, zone };
  }
  let i = 0;
  while (i < 16) {
    const digits = /^[0-9A-Fa-f]*/.exec(rest)?.[0] ?? '';
    if (digits.length > 4) throw new AddrError(input, 'each group must have 4 or less digits', rest);
    if (digits.length === 0)
      throw new AddrError(input, 'each colon-separated field must have at least one digit', rest);
    if (rest[digits.length] === '.') {
      if (ellipsis < 0 && i !== 12)
        throw new AddrError(input, 'embedded IPv4 address must replace the final 2 fields of the address', rest);
      if (i + 4 > 16)
        throw new AddrError(input, 'too many hex fields to fit an embedded IPv4 at the end of the address', rest);
      const end = input.length - (zone ? zone.length + 1 : 0);
      bytes.set(ipv4Fields(input, end - rest.length, end, false), i);
      rest = '';
      i += 4;
      break;
    }
    const word = parseInt(digits, 16);
    bytes[i] = word >> 8;
    bytes[i + 1] = word & 0xff;
    i += 2;
    rest = rest.slice(digits.length);
    if (rest === '') break;
    if (rest[0] !== ':') throw new AddrError(input, 'unexpected character, want colon', rest);
    if (rest.length === 1) throw new AddrError(input, 'colon must be followed by more characters', rest);
    rest = rest.slice(1);
    if (rest[0] === ':') {
      if (ellipsis >= 0) throw new AddrError(input, 'multiple :: in address', rest);
      ellipsis = i;
      rest = rest.slice(1);
      if (rest === '') break;
    }
  }
  if (rest !== '') throw new AddrError(input, 'trailing garbage after address', rest);
  if (i < 16) {
    if (ellipsis < 0) throw new AddrError(input, 'address string too short');
    const shift = 16 - i;
    bytes.copyWithin(ellipsis + shift, ellipsis, i);
    bytes.fill(0, ellipsis, ellipsis + shift);
  } else if (ellipsis >= 0) throw new AddrError(input, 'the :: must expand to at least one field of zeros', rest);
  return { family: 6, bytes, zone };
}

/** Go's netip.ParseAddr; throws AddrError with Go's message. */
export function parseAddr(text: string): Addr {
  for (const c of text) {
    if (c === '.') return { family: 4, bytes: Uint8Array.from(ipv4Fields(text, 0, text.length, false)), zone: '' };
    if (c === ':') return ipv6(text);
    if (c === '%') throw new AddrError(text, 'missing IPv6 address');
  }
  throw new AddrError(text, 'unable to parse IP');
}

/** netip.Addr.Is4In6: an IPv6 address of the form ::ffff:a.b.c.d. */
export const is4In6 = (addr: Addr) => addr.family === 6 && V4_MAPPED_PREFIX.every((b, i) => addr.bytes[i] === b);

function parseIPv4Sloppy(text: string): number[] | undefined {
  if (!/^[0-9.]+$/.test(text)) return undefined;
  try {
    return ipv4Fields(text, 0, text.length, true);
  } catch {
    return undefined;
  }
}

/** ParseIPSloppy: undefined where Go answers nil. */
export function parseIPSloppy(text: string): IPBytes | undefined {
  const v4 = parseIPv4Sloppy(text);
  if (v4) return Uint8Array.from([...V4_MAPPED_PREFIX, ...v4]);
  if (!text.includes(':')) return undefined;
  try {
    const addr = ipv6(text);
    return addr.zone === '' ? addr.bytes : undefined;
  } catch {
    return undefined;
  }
}

const isV4 = (ip: IPBytes) => V4_MAPPED_PREFIX.every((b, i) => ip[i] === b);

/** ParseCIDRSloppy; throws Go's `invalid CIDR address: <text>`. */
export function parseCIDRSloppy(text: string): IPNet {
  const fail = () => new Error(`invalid CIDR address: ${text}`);
  const slash = text.indexOf('/');
  if (slash < 0) throw fail();
  const addressText = text.slice(0, slash);
  const maskText = text.slice(slash + 1);
  const literalV4 = parseIPv4Sloppy(addressText) !== undefined;
  const ip = parseIPSloppy(addressText);
  const width = literalV4 ? 32 : 128;
  if (!ip || !/^[0-9]+$/.test(maskText) || Number(maskText) > width) throw fail();
  const ones = Number(maskText);
  // The network address keeps the mask's bits; for IPv4 literals the mask covers the last 4 bytes.
  const maskBits = literalV4 ? 96 + ones : ones;
  const network = ip.map((byte, i) => byte & maskByte(maskBits, i));
  const v4 = isV4(network);
  return { ip: network, v4, bits: v4 ? Math.max(0, maskBits - 96) : maskBits };
}

function maskByte(bits: number, index: number): number {
  const remaining = bits - index * 8;
  if (remaining >= 8) return 0xff;
  if (remaining <= 0) return 0;
  return (0xff << (8 - remaining)) & 0xff;
}

/** net.IPNet.Contains. */
export function cidrContains(net: IPNet, ip: IPBytes): boolean {
  if (net.v4 !== isV4(ip)) return false;
  const offset = net.v4 ? 12 : 0;
  const bits = net.bits + offset * 8;
  for (let i = offset; i < 16; i++) {
    const mask = maskByte(bits, i);
    if ((ip[i] & mask) !== (net.ip[i] & mask)) return false;
  }
  return true;
}

/** Go's netip.ParsePrefix: the address as written and the prefix length; throws Go's message. */
export function parsePrefix(text: string): { addr: Addr; bits: number } {
  const fail = (reason: string) => new Error(`netip.ParsePrefix(${JSON.stringify(text)}): ${reason}`);
  const slash = text.lastIndexOf('/');
  if (slash < 0) throw fail("no '/'");
  let addr: Addr;
  try {
    addr = parseAddr(text.slice(0, slash));
  } catch (error) {
    throw error instanceof AddrError ? fail(error.message) : error;
  }
  if (addr.zone !== '') throw fail('IPv6 zones cannot be present in a prefix');
  const bitsText = text.slice(slash + 1);
  if (!/^(0|[1-9][0-9]*)$/.test(bitsText)) throw fail(`bad bits after slash: ${JSON.stringify(bitsText)}`);
  const bits = Number(bitsText);
  if (bits > (addr.family === 4 ? 32 : 128)) throw fail('prefix length out of range');
  return { addr, bits };
}
