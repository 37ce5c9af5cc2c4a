// The local PKI: a CA, the webhook server's certificate, and the client certificate the
// kube-apiserver presents (the mTLS half that lives on the cluster side). Made with node-forge so
// that nothing but `npm ci` is needed; RSA keys come from Node's native generator through forge.
import { randomBytes, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';

export const DEFAULT_PKI_DIR = '.local/pki';
export const CLIENT_COMMON_NAME = 'kube-apiserver-admission-client';
const DAY_MS = 24 * 60 * 60 * 1000;

export interface KeyAndCertificate {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface LocalPki {
  readonly dir: string;
  readonly ca: KeyAndCertificate;
  readonly server: KeyAndCertificate;
  readonly client: KeyAndCertificate;
  readonly files: {
    readonly ca: string;
    readonly serverCert: string;
    readonly serverKey: string;
    readonly clientCert: string;
    readonly clientKey: string;
  };
}

export interface CertificateRequest {
  readonly commonName: string;
  readonly organization?: string;
  readonly days: number;
  /** For server certificates: DNS names and IP addresses. */
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
  readonly usage: 'ca' | 'server' | 'client';
}

function subjectOf(request: CertificateRequest): forge.pki.CertificateField[] {
  const subject: forge.pki.CertificateField[] = [{ name: 'commonName', value: request.commonName }];
  if (request.organization) subject.push({ name: 'organizationName', value: request.organization });
  return subject;
}

function extensionsOf(request: CertificateRequest): object[] {
  if (request.usage === 'ca') {
    return [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
      { name: 'subjectKeyIdentifier' },
    ];
  }
  const altNames = [
    ...(request.dnsNames ?? []).map((value) => ({ type: 2, value })),
    ...(request.ipAddresses ?? []).map((ip) => ({ type: 7, ip })),
  ];
  return [
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: request.usage === 'server', clientAuth: request.usage === 'client' },
    ...(altNames.length ? [{ name: 'subjectAltName', altNames }] : []),
  ];
}

/** Issues a certificate signed by `issuer`, or self-signed when there is none (a CA). */
export function issueCertificate(request: CertificateRequest, issuer?: KeyAndCertificate): KeyAndCertificate {
  const keys = forge.pki.rsa.generateKeyPair({ bits: 2048 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  // A positive serial: clear the top bit of the first byte.
  cert.serialNumber = (randomBytes(16)[0] & 0x7f).toString(16).padStart(2, '0') + randomBytes(15).toString('hex');
  const now = Date.now();
  cert.validity.notBefore = new Date(now - 60_000);
  cert.validity.notAfter = new Date(now + request.days * DAY_MS);
  cert.setSubject(subjectOf(request));
  const issuerCert = issuer ? forge.pki.certificateFromPem(issuer.certPem) : undefined;
  cert.setIssuer(issuerCert ? issuerCert.subject.attributes : subjectOf(request));
  cert.setExtensions(extensionsOf(request));
  const signingKey = issuer ? forge.pki.privateKeyFromPem(issuer.keyPem) : keys.privateKey;
  cert.sign(signingKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(keys.privateKey) };
}

export function pkiFiles(dir: string): LocalPki['files'] {
  return {
    ca: join(dir, 'ca.crt'),
    serverCert: join(dir, 'server.crt'),
    serverKey: join(dir, 'server.key'),
    clientCert: join(dir, 'client.crt'),
    clientKey: join(dir, 'client.key'),
  };
}

/** Everything a fresh PKI needs: the CA signs one server and one client certificate. */
export function createPki(
  options: { serverHosts?: readonly string[]; clientCommonName?: string; caCommonName?: string } = {},
): Pick<LocalPki, 'ca' | 'server' | 'client'> {
  const hosts = options.serverHosts ?? ['localhost', '127.0.0.1', '::1'];
  const isIp = (h: string) => /^[\d.]+$/.test(h) || h.includes(':');
  const ca = issueCertificate({
    commonName: options.caCommonName ?? 'serverless-admission local CA',
    organization: 'serverless-admission',
    days: 3650,
    usage: 'ca',
  });
  const server = issueCertificate(
    {
      commonName: hosts[0],
      days: 825,
      usage: 'server',
      dnsNames: hosts.filter((h) => !isIp(h)),
      ipAddresses: hosts.filter(isIp),
    },
    ca,
  );
  const client = issueCertificate(
    {
      commonName: options.clientCommonName ?? CLIENT_COMMON_NAME,
      organization: 'serverless-admission',
      days: 825,
      usage: 'client',
    },
    ca,
  );
  return { ca, server, client };
}

/**
 * Reads the PKI under `dir`, creating it on first use. Keys are written 0600; an existing PKI is
 * never overwritten (rotation is explicit: `npm run pki -- --rotate`).
 */
export function ensureLocalPki(
  dir = DEFAULT_PKI_DIR,
  options: { rotate?: boolean; caCommonName?: string } = {},
): LocalPki & { created: boolean } {
  const files = pkiFiles(dir);
  const present = Object.values(files).every((f) => existsSync(f));
  if (!present || options.rotate) {
    mkdirSync(dir, { recursive: true });
    const { ca, server, client } = createPki({ caCommonName: options.caCommonName });
    const write = (file: string, text: string, secret: boolean) => {
      writeFileSync(file, text);
      if (secret) chmodSync(file, 0o600);
    };
    write(files.ca, ca.certPem, false);
    write(files.serverCert, server.certPem, false);
    write(files.serverKey, server.keyPem, true);
    write(files.clientCert, client.certPem, false);
    write(files.clientKey, client.keyPem, true);
    // The CA key stays beside the CA so that more client certificates can be issued later.
    write(join(dir, 'ca.key'), ca.keyPem, true);
    return { dir, ca, server, client, files, created: true };
  }
  const read = (f: string) => readFileSync(f, 'utf8');
  const caKey = join(dir, 'ca.key');
  return {
    dir,
    ca: { certPem: read(files.ca), keyPem: existsSync(caKey) ? read(caKey) : '' },
    server: { certPem: read(files.serverCert), keyPem: read(files.serverKey) },
    client: { certPem: read(files.clientCert), keyPem: read(files.clientKey) },
    files,
    created: false,
  };
}

// --- Rotation and the API Gateway truststore -------------------------------------------------
//
// API Gateway's mTLS truststore is a PEM bundle of CA certificates in S3. A rotation keeps the
// old CA in the bundle until every apiserver presents a certificate from the new one:
//
//   rotateLocalPki          new CA + server + client; old CA kept as ca.previous.crt;
//                           truststore = new CA + old CA   (upload; both clients accepted)
//   (install the new client certificate on the control plane: npm run emit -- --out ...)
//   finishPkiRotation       drop ca.previous.crt; truststore = new CA   (upload; old refused)

export const PREVIOUS_CA_FILE = 'ca.previous.crt';
export const TRUSTSTORE_FILE = 'truststore.pem';

/** The CA certificates API Gateway must trust now: the current CA, and the previous one mid-rotation. */
export function truststoreCertificates(dir = DEFAULT_PKI_DIR): string[] {
  const previous = join(dir, PREVIOUS_CA_FILE);
  return [pkiFiles(dir).ca, ...(existsSync(previous) ? [previous] : [])].map((f) => readFileSync(f, 'utf8').trim());
}

/** Writes the truststore bundle (default `<dir>/truststore.pem`) and returns its path. */
export function writeTruststore(dir = DEFAULT_PKI_DIR, file = join(dir, TRUSTSTORE_FILE)): string {
  writeFileSync(file, `${truststoreCertificates(dir).join('\n')}\n`);
  return file;
}

export function rotationInProgress(dir = DEFAULT_PKI_DIR): boolean {
  return existsSync(join(dir, PREVIOUS_CA_FILE));
}

/** Starts a rotation: refuses while one is in progress, since a third CA would strand a client. */
export function rotateLocalPki(dir = DEFAULT_PKI_DIR): LocalPki & { created: boolean } {
  if (rotationInProgress(dir))
    throw new Error(`a rotation is in progress (${join(dir, PREVIOUS_CA_FILE)} exists): finish it first`);
  const files = pkiFiles(dir);
  if (!existsSync(files.ca)) throw new Error(`no PKI in ${dir} to rotate: run without --rotate to create one`);
  writeFileSync(join(dir, PREVIOUS_CA_FILE), readFileSync(files.ca, 'utf8'));
  // A distinct CA name: verifiers pick issuers by subject, and two CAs of one name in a
  // truststore could send the chain to the wrong one.
  return ensureLocalPki(dir, {
    rotate: true,
    caCommonName: `serverless-admission local CA ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}`,
  });
}

/** Ends a rotation: the old CA leaves the truststore. Returns whether there was one. */
export function finishPkiRotation(dir = DEFAULT_PKI_DIR): boolean {
  const previous = join(dir, PREVIOUS_CA_FILE);
  if (!existsSync(previous)) return false;
  rmSync(previous);
  return true;
}

// --- A fleet's clusters: one client certificate per cluster --------------------------------------
//
// In a fleet (docs/fleet.md) each cluster's apiservers present a certificate whose subject is one
// of that cluster's allowedSubjects, signed by the same CA (the server trusts one truststore).
// They live apart from the single cluster's, under .local/clusters/<cluster>/, each cluster's own:
//
//   ensureClusterClient     on first use: a certificate for the first plain CN of allowedSubjects
//   rotateClusterClient     a new key and certificate, for the subject allowedSubjects lists first;
//                           a certificate of a subject no longer allowed is refused by the server

export const clusterClientFiles = (cluster: string): { readonly cert: string; readonly key: string } => ({
  cert: `.local/clusters/${cluster}/client.crt`,
  key: `.local/clusters/${cluster}/client.key`,
});

/** The subject DN as the server reads it from a peer certificate: CN first, `,`-joined (server.ts). */
export function certificateSubject(certPem: string): string {
  const lines = new X509Certificate(certPem).subject.split('\n').filter(Boolean);
  return [...lines.filter((l) => l.startsWith('CN=')), ...lines.filter((l) => !l.startsWith('CN='))].join(',');
}

/** The CN a new certificate of the cluster carries: the first allowed subject that is a plain CN. */
function clusterCommonName(cluster: string, allowedSubjects: readonly string[]): string {
  const commonName = allowedSubjects.find((subject) => !subject.includes('='));
  if (commonName !== undefined) return commonName;
  throw new Error(
    allowedSubjects.length === 0
      ? `cluster ${cluster} has no allowedSubjects: name its apiservers' certificate CN in config/clusters/${cluster}.settings.yaml (allowedSubjects: [${cluster}-apiserver])`
      : `cluster ${cluster}'s allowedSubjects are all DNs (${allowedSubjects.join('; ')}): add a plain CN for a certificate issued here, or pass your own with --client-cert/--client-key`,
  );
}

function issueClusterClient(cluster: string, allowedSubjects: readonly string[], pkiDir: string): KeyAndCertificate {
  const { ca } = ensureLocalPki(pkiDir);
  if (ca.keyPem === '')
    throw new Error(`no CA key (${join(pkiDir, 'ca.key')}) to sign cluster ${cluster}'s certificate`);
  const client = issueCertificate(
    {
      commonName: clusterCommonName(cluster, allowedSubjects),
      organization: 'serverless-admission',
      days: 825,
      usage: 'client',
    },
    ca,
  );
  const files = clusterClientFiles(cluster);
  mkdirSync(join(files.cert, '..'), { recursive: true });
  writeFileSync(files.cert, client.certPem);
  writeFileSync(files.key, client.keyPem, { mode: 0o600 });
  chmodSync(files.key, 0o600);
  return client;
}

/**
 * The cluster's client certificate, issued by the local CA on first use (key 0600). An existing one
 * is kept as it is: replacing it is a rotation, explicit (rotateClusterClient).
 */
export function ensureClusterClient(
  cluster: string,
  allowedSubjects: readonly string[],
  pkiDir = DEFAULT_PKI_DIR,
): KeyAndCertificate & { readonly created: boolean } {
  const files = clusterClientFiles(cluster);
  if (!existsSync(files.cert) || !existsSync(files.key))
    return { ...issueClusterClient(cluster, allowedSubjects, pkiDir), created: true };
  const client = { certPem: readFileSync(files.cert, 'utf8'), keyPem: readFileSync(files.key, 'utf8') };
  return { ...client, created: false };
}

/** A new key and certificate for the cluster, for the subject its allowedSubjects list first. */
export function rotateClusterClient(
  cluster: string,
  allowedSubjects: readonly string[],
  pkiDir = DEFAULT_PKI_DIR,
): KeyAndCertificate {
  return issueClusterClient(cluster, allowedSubjects, pkiDir);
}
