// IP addresses and CIDRs as k8s.io/utils/net's ParseIPSloppy and ParseCIDRSloppy read them (Go's
// net package, plus leading zeros in IPv4 octets read as decimal), and net.IPNet.Contains as Go
// answers it: an IPv4 network contains IPv4 addresses (IPv4-mapped IPv6 included), an IPv6 network
// only IPv6 ones.

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

const V4_MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

function parseIPv4Sloppy(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const octets: number[] = [];
  for (const part of parts) {
    if (!/^[0-9]{1,3}$/.test(part)) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    octets.push(value);
  }
  return octets;
}

function parseIPv6(text: string): number[] | undefined {
  if (text.includes('%') || !/^[0-9A-Fa-f:.]+$/.test(text)) return undefined;
  let tail: number[] = [];
  let body = text;
  // An embedded IPv4 address may end the text (::ffff:1.2.3.4).
  const lastColon = body.lastIndexOf(':');
  if (body.slice(lastColon + 1).includes('.')) {
    const v4 = parseIPv4Sloppy(body.slice(lastColon + 1));
    if (!v4) return undefined;
    tail = v4;
    body = `${body.slice(0, lastColon + 1)}0:0`;
  }
  const halves = body.split('::');
  if (halves.length > 2) return undefined;
  const groups = (half: string) => (half === '' ? [] : half.split(':'));
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  if ([...head, ...rest].some((g) => !/^[0-9A-Fa-f]{1,4}$/.test(g))) return undefined;
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const words = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest].map((g) => parseInt(g, 16));
  const bytes = words.flatMap((w) => [w >> 8, w & 0xff]);
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

/** ParseIPSloppy: undefined where Go answers nil. */
export function parseIPSloppy(text: string): IPBytes | undefined {
  const v4 = parseIPv4Sloppy(text);
  if (v4) return Uint8Array.from([...V4_MAPPED_PREFIX, ...v4]);
  if (!text.includes(':')) return undefined;
  const v6 = parseIPv6(text);
  return v6 ? Uint8Array.from(v6) : undefined;
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
