// The subject of a PKCS#10 certificate request, read the way the apiserver reads
// CertificateSigningRequest.spec.request (certificates.ParseCSR: the first PEM block must be a
// CERTIFICATE REQUEST, then Go's x509.ParseCertificateRequest). Only the subject is read: no
// admission plugin looks at the key or checks the signature, and node-forge's own CSR parser
// refuses every key that is not RSA (kubelets use ECDSA keys), so the DER is walked here.
import forge from 'node-forge';

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

type Asn1 = forge.asn1.Asn1;
const { Class, Type } = forge.asn1;

// The typings omit fromDer's options object.
const fromDer = forge.asn1.fromDer as unknown as (bytes: string, options: { strict: boolean; parseAllBytes: boolean; decodeBitStrings: boolean }) => Asn1;

function isUniversal(node: Asn1 | undefined, type: number, constructed: boolean): node is Asn1 {
  return node !== undefined && node.tagClass === Class.UNIVERSAL && node.type === type && node.constructed === constructed && Array.isArray(node.value) === constructed;
}

/** Go's asn1 decodes these string types to a Go string; other values are not names. */
function stringValue(node: Asn1): string | undefined {
  if (node.tagClass !== Class.UNIVERSAL || node.constructed || typeof node.value !== 'string') return undefined;
  const raw = node.value;
  switch (node.type as number) {
    case Type.UTF8:
      return forge.util.decodeUtf8(raw);
    case Type.PRINTABLESTRING:
    case Type.IA5STRING:
    case 18: // NumericString
    case 20: // T61String
      return raw;
    case Type.BMPSTRING: {
      let text = '';
      for (let i = 0; i + 1 < raw.length; i += 2) text += String.fromCharCode((raw.charCodeAt(i) << 8) | raw.charCodeAt(i + 1));
      return text;
    }
    default:
      return undefined;
  }
}

const truncated = () => new CertificateRequestParseError('asn1: syntax error: sequence truncated');
const structureError = () => new CertificateRequestParseError("asn1: structure error: tags don't match");

function parseDer(der: Buffer): Asn1 {
  if (der.length === 0) throw truncated();
  try {
    return fromDer(der.toString('binary'), { strict: true, parseAllBytes: true, decodeBitStrings: false });
  } catch (error) {
    const message = (error as Error).message;
    if (message.startsWith('Unparsed DER bytes remain')) throw new CertificateRequestParseError('asn1: syntax error: trailing data');
    if (message.startsWith('Too few bytes')) throw new CertificateRequestParseError('asn1: syntax error: data truncated');
    throw structureError();
  }
}

function subjectOf(request: Asn1): CertificateRequestSubject {
  // CertificationRequest ::= SEQUENCE { certificationRequestInfo, signatureAlgorithm, signature }
  if (!isUniversal(request, Type.SEQUENCE, true)) throw structureError();
  const [info] = request.value as Asn1[];
  if (!isUniversal(info, Type.SEQUENCE, true)) throw structureError();
  // CertificationRequestInfo ::= SEQUENCE { version INTEGER, subject Name, subjectPKInfo, attributes [0] }
  const [version, subject] = info.value as Asn1[];
  if (!isUniversal(version, Type.INTEGER, false) || !isUniversal(subject, Type.SEQUENCE, true)) throw structureError();
  let commonName = '';
  const organization: string[] = [];
  for (const rdn of subject.value as Asn1[]) {
    if (!isUniversal(rdn, Type.SET, true)) throw structureError();
    for (const atv of rdn.value as Asn1[]) {
      if (!isUniversal(atv, Type.SEQUENCE, true)) throw structureError();
      const [oid, value] = atv.value as Asn1[];
      if (!isUniversal(oid, Type.OID, false) || value === undefined) throw structureError();
      const type = forge.asn1.derToOid(oid.value as string);
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
