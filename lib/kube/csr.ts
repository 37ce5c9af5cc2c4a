// The subject of a PKCS#10 certificate request, read the way the apiserver reads
// CertificateSigningRequest.spec.request (certificates.ParseCSR: the first PEM block must be a
// CERTIFICATE REQUEST, then Go's x509.ParseCertificateRequest). Only the subject is read: no
// admission plugin looks at the key or checks the signature. A small DER reader walks the whole
// structure here: a general ASN.1 library (node-forge) tripled the size of this function's
// bundle for the same few tags, and its CSR parser refuses every key that is not RSA (kubelets
// use ECDSA keys).

export interface CertificateRequestSubject {
  /** The last CN, as Go's pkix.Name keeps it; '' when there is none. */
  readonly commonName: string;
  /** Every O value in order (the groups a client certificate would carry). */
  readonly organization: readonly string[];
}

/** A request that Go would not parse; the message reads as Go's error where we know it. */
export class CertificateRequestParseError extends Error {
  override readonly name = 'CertificateRequestParseError';
}

const OID_COMMON_NAME = '2.5.4.3';
const OID_ORGANIZATION = '2.5.4.10';

/**
 * The first PEM block whose BEGIN line has a matching END line and a base64 body, as encoding/pem
 * finds it (a block that does not decode is skipped, and the search goes on after it).
 */
function firstPemBlock(text: string): { type: string; bytes: Buffer } | undefined {
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const begin = /^-----BEGIN (.*)-----\s*$/.exec(lines[i]);
    if (!begin) continue;
    const type = begin[1];
    const end = lines.findIndex((line, j) => j > i && line.trimEnd() === `-----END ${type}-----`);
    if (end < 0) continue;
    // Optional RFC 1421 headers ("Key: value") come before the body.
    let body = lines.slice(i + 1, end);
    const headerEnd = body.findIndex((line) => !line.includes(':'));
    if (headerEnd > 0) body = body.slice(headerEnd).filter((line, k) => k > 0 || line.trim() !== '');
    const base64 = body.join('');
    if (!/^[A-Za-z0-9+/=\s]*$/.test(base64)) continue;
    return { type, bytes: Buffer.from(base64, 'base64') };
  }
  return undefined;
}

/** One DER element: a primitive's content bytes, or a constructed element's children. */
interface Der {
  readonly tagClass: number;
  readonly tag: number;
  readonly constructed: boolean;
  readonly bytes: Buffer;
  readonly children: readonly Der[];
}

const UNIVERSAL = 0;
const Tag = {
  INTEGER: 2,
  BIT_STRING: 3,
  OID: 6,
  UTF8: 12,
  NUMERIC: 18,
  PRINTABLE: 19,
  T61: 20,
  IA5: 22,
  BMP: 30,
  SEQUENCE: 16,
  SET: 17,
} as const;

const truncated = () => new CertificateRequestParseError('asn1: syntax error: sequence truncated');
const structureError = () => new CertificateRequestParseError("asn1: structure error: tags don't match");
const dataTruncated = () => new CertificateRequestParseError('asn1: syntax error: data truncated');

/** The elements of `der` from `start` to `end`, every constructed one read down to its leaves. */
function readElements(der: Buffer, start: number, end: number): Der[] {
  const elements: Der[] = [];
  let at = start;
  while (at < end) {
    if (at + 2 > end) throw dataTruncated();
    const first = der[at++];
    const tagClass = first >> 6;
    const constructed = (first & 0x20) !== 0;
    let tag = first & 0x1f;
    if (tag === 0x1f) {
      // High tag numbers, base 128 (DER: never one that fits in five bits, no leading zero).
      tag = 0;
      let byte: number;
      do {
        if (at >= end) throw dataTruncated();
        byte = der[at++];
        if (tag === 0 && byte === 0x80) throw structureError();
        tag = tag * 128 + (byte & 0x7f);
        if (tag > 0x7fffffff) throw structureError();
      } while (byte & 0x80);
      if (tag < 0x1f) throw structureError();
    }
    if (at >= end) throw dataTruncated();
    let length = der[at++];
    if (length & 0x80) {
      // Long form: DER uses it only when needed, without leading zeros; no indefinite length.
      const count = length & 0x7f;
      if (count === 0 || count > 4) throw structureError();
      if (at + count > end) throw dataTruncated();
      length = 0;
      for (let i = 0; i < count; i++) length = length * 256 + der[at++];
      if (length < 0x80 || der[at - count] === 0) throw structureError();
    }
    if (at + length > end) throw dataTruncated();
    const bytes = der.subarray(at, at + length);
    elements.push({
      tagClass,
      tag,
      constructed,
      bytes,
      children: constructed ? readElements(der, at, at + length) : [],
    });
    at += length;
  }
  return elements;
}

function parseDer(der: Buffer): Der {
  if (der.length === 0) throw truncated();
  // The outer element must span the block exactly.
  const first = readElements(der, 0, der.length);
  if (first.length !== 1) throw new CertificateRequestParseError('asn1: syntax error: trailing data');
  return first[0];
}

function isUniversal(node: Der | undefined, tag: number, constructed: boolean): node is Der {
  return node !== undefined && node.tagClass === UNIVERSAL && node.tag === tag && node.constructed === constructed;
}

/** Dotted decimal of an OBJECT IDENTIFIER's content bytes. */
function oidOf(bytes: Buffer): string {
  const arcs: number[] = [];
  let value = 0;
  for (const byte of bytes) {
    value = value * 128 + (byte & 0x7f);
    if (byte & 0x80) continue;
    if (arcs.length === 0) arcs.push(value < 80 ? Math.floor(value / 40) : 2, value < 80 ? value % 40 : value - 80);
    else arcs.push(value);
    value = 0;
  }
  return arcs.join('.');
}

/** Go's asn1 decodes these string types to a Go string; other values are not names. */
/** Go's isPrintable as its parser calls it (asterisk and ampersand allowed, for compatibility). */
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?*&]*$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: IA5 is 7-bit ASCII, control characters included.
const IA5 = /^[\x00-\x7f]*$/;
const NUMERIC = /^[0-9 ]*$/;

const invalid = (type: string) =>
  new CertificateRequestParseError(`asn1: syntax error: ${type} contains invalid character`);

/**
 * A string attribute value as Go's encoding/asn1 decodes it into a pkix.Name: each string type is
 * checked against its alphabet, and one that breaks it fails the whole request, as in Go.
 * undefined for anything that is not a string (kept out of the name, as Go keeps it).
 */
function stringValue(node: Der): string | undefined {
  if (node.tagClass !== UNIVERSAL || node.constructed) return undefined;
  const latin1 = () => node.bytes.toString('latin1');
  switch (node.tag) {
    case Tag.UTF8: {
      const text = node.bytes.toString('utf8');
      if (!Buffer.from(text, 'utf8').equals(node.bytes))
        throw new CertificateRequestParseError('asn1: syntax error: invalid UTF-8 string');
      return text;
    }
    case Tag.PRINTABLE:
      if (!PRINTABLE.test(latin1())) throw invalid('PrintableString');
      return latin1();
    case Tag.IA5:
      if (!IA5.test(latin1())) throw invalid('IA5String');
      return latin1();
    case Tag.NUMERIC:
      if (!NUMERIC.test(latin1())) throw invalid('NumericString');
      return latin1();
    case Tag.T61:
      return latin1();
    case Tag.BMP: {
      if (node.bytes.length % 2 !== 0) throw new CertificateRequestParseError('pkcs12: odd-length BMP string');
      let text = '';
      for (let i = 0; i + 1 < node.bytes.length; i += 2)
        text += String.fromCharCode((node.bytes[i] << 8) | node.bytes[i + 1]);
      return text;
    }
    default:
      return undefined;
  }
}

/** The checks Go's asn1 makes of an INTEGER it decodes into an int (the request's version). */
function checkGoInt(bytes: Buffer): void {
  const fail = (reason: string) => new CertificateRequestParseError(`asn1: structure error: ${reason}`);
  if (bytes.length === 0) throw fail('empty integer');
  if (bytes.length > 1 && ((bytes[0] === 0 && bytes[1] < 0x80) || (bytes[0] === 0xff && bytes[1] >= 0x80)))
    throw fail('integer not minimally-encoded');
  if (bytes.length > 8) throw fail('integer too large');
}

function subjectOf(request: Der): CertificateRequestSubject {
  // CertificationRequest ::= SEQUENCE { certificationRequestInfo, signatureAlgorithm, signature }
  if (!isUniversal(request, Tag.SEQUENCE, true)) throw structureError();
  const [info, signatureAlgorithm, signature] = request.children;
  if (!isUniversal(info, Tag.SEQUENCE, true)) throw structureError();
  if (!isUniversal(signatureAlgorithm, Tag.SEQUENCE, true) || !isUniversal(signature, Tag.BIT_STRING, false)) {
    throw structureError();
  }
  // CertificationRequestInfo ::= SEQUENCE { version INTEGER, subject Name, subjectPKInfo, attributes [0] }
  const [version, subject, publicKeyInfo] = info.children;
  if (!isUniversal(version, Tag.INTEGER, false) || !isUniversal(subject, Tag.SEQUENCE, true)) throw structureError();
  checkGoInt(version.bytes);
  // SubjectPublicKeyInfo ::= SEQUENCE { algorithm AlgorithmIdentifier, subjectPublicKey BIT STRING }: Go
  // unmarshals it into that struct, so an element of another shape fails the whole request.
  const [keyAlgorithm, publicKey] = publicKeyInfo?.children ?? [];
  if (
    !isUniversal(publicKeyInfo, Tag.SEQUENCE, true) ||
    !isUniversal(keyAlgorithm, Tag.SEQUENCE, true) ||
    !isUniversal(publicKey, Tag.BIT_STRING, false)
  ) {
    throw structureError();
  }
  let commonName = '';
  const organization: string[] = [];
  for (const rdn of subject.children) {
    if (!isUniversal(rdn, Tag.SET, true)) throw structureError();
    for (const atv of rdn.children) {
      if (!isUniversal(atv, Tag.SEQUENCE, true)) throw structureError();
      const [oid, value] = atv.children;
      if (!isUniversal(oid, Tag.OID, false) || value === undefined) throw structureError();
      const type = oidOf(oid.bytes);
      const text = stringValue(value);
      if (text === undefined) continue;
      if (type === OID_COMMON_NAME) commonName = text;
      else if (type === OID_ORGANIZATION) organization.push(text);
    }
  }
  return { commonName, organization };
}

/**
 * `request` is spec.request as it travels in JSON: base64 of the PEM text. Throws a
 * CertificateRequestParseError with Go's message for what the apiserver would fail to parse.
 */
export function parseCertificateRequestSubject(request: unknown): CertificateRequestSubject {
  const pem = typeof request === 'string' ? Buffer.from(request, 'base64').toString('latin1') : '';
  const block = firstPemBlock(pem);
  if (block === undefined || block.type !== 'CERTIFICATE REQUEST') {
    throw new CertificateRequestParseError('PEM block type must be CERTIFICATE REQUEST');
  }
  return subjectOf(parseDer(block.bytes));
}
