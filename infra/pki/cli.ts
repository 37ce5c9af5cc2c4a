// `npm run pki`: creates (or shows) the local PKI, rotates it, and writes the truststore bundle
// that API Gateway's mTLS custom domain reads from S3.
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError } from '../../lib/config/errors.js';
import { CLUSTERS_DIR, fleetCluster } from '../../lib/config/fleet.js';
import { subjectAllowed } from '../../lib/http/caller-identity.js';
import {
  certificateSubject,
  clusterClientFiles,
  DEFAULT_PKI_DIR,
  ensureClusterClient,
  ensureLocalPki,
  finishPkiRotation,
  PREVIOUS_CA_FILE,
  rotateClusterClient,
  rotateLocalPki,
  rotationInProgress,
  TRUSTSTORE_FILE,
  writeTruststore,
} from './pki.js';

const USAGE = `Usage: npm run pki -- [--dir DIR] [--rotate | --finish-rotation] [--truststore FILE]
       npm run pki -- --cluster NAME [--rotate]

Creates the local PKI in ${DEFAULT_PKI_DIR} on first use (ca.crt/.key, server.crt/.key,
client.crt/.key: the identity the kube-apiserver presents), never overwriting it, and writes the
truststore for API Gateway's mTLS domain (${DEFAULT_PKI_DIR}/${TRUSTSTORE_FILE}: the CA certificate,
or the new and the previous CA during a rotation). Prints what it holds.

Options:
  --dir DIR            PKI directory (default ${DEFAULT_PKI_DIR})
  --truststore FILE    where to write the truststore (default DIR/${TRUSTSTORE_FILE})
  --rotate             start a rotation: a new CA, server and client certificate; the previous
                       CA stays in the truststore (${PREVIOUS_CA_FILE}) so both clients work
  --finish-rotation    end it: the previous CA leaves the truststore
  --cluster NAME       a fleet's cluster (${CLUSTERS_DIR}/NAME.yaml): its apiservers' own client
                       certificate, .local/clusters/NAME/client.crt and .key, signed by the CA of
                       --dir, for the first CN in its allowedSubjects (created when missing);
                       with --rotate, a new key and certificate for that cluster alone
  -h, --help           this text

Rotation of a deployment:
  1. npm run pki -- --rotate; upload the truststore to the truststoreUri object; redeploy with
     --param="truststoreVersion=<new S3 object version>" (API Gateway now accepts both CAs)
  2. npm run emit -- --base-url URL --out DIR; install DIR/kubeconfig.yaml on every control plane
  3. npm run pki -- --finish-rotation; upload and redeploy as in 1 (the old CA is refused)

Rotation of one cluster of a fleet (the CA stays):
  1. put the new subject first in the cluster's allowedSubjects, keeping the old one; restart
  2. npm run pki -- --cluster NAME --rotate; npm run -s emit -- --cluster NAME --out DIR ...;
     install DIR/kubeconfig.yaml on the cluster's control planes
  3. remove the old subject from allowedSubjects; restart (the old certificate is refused)

Exit status: 0 done, 2 bad arguments, 1 anything else.
`;

export interface PkiIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

function describeCertificate(label: string, file: string): string {
  if (!existsSync(file)) return `${label.padEnd(10)} ${file} (missing)`;
  const cert = new X509Certificate(readFileSync(file));
  const cn = /CN=([^\n,]+)/.exec(cert.subject)?.[1] ?? cert.subject;
  return `${label.padEnd(10)} ${file}  CN=${cn}  until ${new Date(cert.validTo).toISOString().slice(0, 10)}  sha256 ${cert.fingerprint256}`;
}

export function pkiCommand(argv: string[], io: PkiIo): number {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: {
        dir: { type: 'string', default: DEFAULT_PKI_DIR },
        truststore: { type: 'string' },
        rotate: { type: 'boolean', default: false },
        'finish-rotation': { type: 'boolean', default: false },
        cluster: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (error) {
    io.stderr(`pki: ${(error as Error).message}\nRun npm run pki -- --help for usage.\n`);
    return 2;
  }
  if (values.help) {
    io.stdout(USAGE);
    return 0;
  }
  if (values.rotate && values['finish-rotation']) {
    io.stderr('pki: --rotate starts a rotation, --finish-rotation ends one: choose one\n');
    return 2;
  }
  const dir = values.dir;
  if (values.cluster !== undefined) return clusterClient(values.cluster, dir, values, io);
  try {
    if (values.rotate) {
      rotateLocalPki(dir);
      io.stderr(
        `rotated: new CA, server and client certificates in ${dir}; the previous CA stays trusted until --finish-rotation\n`,
      );
    } else if (values['finish-rotation']) {
      io.stderr(
        finishPkiRotation(dir)
          ? `rotation finished: the previous CA left the truststore\n`
          : `no rotation in progress in ${dir}\n`,
      );
      ensureLocalPki(dir);
    } else {
      const pki = ensureLocalPki(dir);
      io.stderr(pki.created ? `created a local PKI in ${dir}\n` : `PKI in ${dir} (unchanged)\n`);
    }
    const truststore = writeTruststore(dir, values.truststore ?? join(dir, TRUSTSTORE_FILE));
    const lines = [
      describeCertificate('ca', join(dir, 'ca.crt')),
      ...(rotationInProgress(dir) ? [describeCertificate('previous', join(dir, PREVIOUS_CA_FILE))] : []),
      describeCertificate('server', join(dir, 'server.crt')),
      describeCertificate('client', join(dir, 'client.crt')),
      `truststore ${truststore}  (${rotationInProgress(dir) ? 'current + previous CA: rotation in progress' : 'current CA'}; upload to the truststoreUri S3 object)`,
    ];
    io.stdout(`${lines.join('\n')}\n`);
    return 0;
  } catch (error) {
    io.stderr(`pki: ${(error as Error).message}\n`);
    return 1;
  }
}

/** --cluster NAME: the cluster's client certificate, shown, created or (--rotate) renewed. */
function clusterClient(
  name: string,
  dir: string,
  values: { rotate: boolean; 'finish-rotation': boolean; truststore?: string },
  io: PkiIo,
): number {
  if (values['finish-rotation'] || values.truststore !== undefined) {
    io.stderr(
      `pki: --cluster renews one cluster's client certificate under the same CA: --finish-rotation and --truststore are for the CA's rotation\n`,
    );
    return 2;
  }
  try {
    const cluster = fleetCluster(name);
    const { allowedSubjects } = cluster.settings;
    const files = clusterClientFiles(name);
    if (values.rotate) {
      rotateClusterClient(name, allowedSubjects, dir);
      io.stderr(
        `rotated: a new key and certificate for cluster ${name}; install them with emit --cluster ${name} --out\n`,
      );
    } else {
      const client = ensureClusterClient(name, allowedSubjects, dir);
      io.stderr(
        client.created ? `created the client certificate of cluster ${name}\n` : `cluster ${name} (unchanged)\n`,
      );
    }
    const subject = certificateSubject(readFileSync(files.cert, 'utf8'));
    io.stdout(`${describeCertificate(name, files.cert)}\n`);
    if (!subjectAllowed(allowedSubjects, subject))
      io.stderr(
        `note: ${subject} is not in cluster ${name}'s allowedSubjects: the server refuses it (rotate to renew it)\n`,
      );
    return 0;
  } catch (error) {
    io.stderr(`pki: ${error instanceof ConfigError ? 'invalid configuration: ' : ''}${(error as Error).message}\n`);
    return 1;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = pkiCommand(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  });
}
