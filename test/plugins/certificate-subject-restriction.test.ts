// Upstream's table (plugin/pkg/admission/certificates/subjectrestriction/admission_test.go,
// TestPlugin_Validate) ported with real CSRs made by node-forge; plus other resources and
// subresources, the operations it handles, an ECDSA CSR (what kubelets send), v1beta1.
import { createSign, generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import forge from 'node-forge';
import { beforeAll, describe, expect, it } from 'vitest';
import plugin from '../../functions/certificate-subject-restriction/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { CertificateRequestParseError, parseCertificateRequestSubject } from '../../lib/kube/csr.js';
import type { ReviewInput } from '../support/review.js';
import { deniedMessage, runPhase } from '../support/review.js';
import { itHandles } from '../support/handles.js';

const CSRS = {
  kind: { group: 'certificates.k8s.io', kind: 'CertificateSigningRequest' },
  resource: { group: 'certificates.k8s.io', resource: 'certificatesigningrequests' },
};
const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';

let rsaKeys: forge.pki.rsa.KeyPair;
beforeAll(() => {
  // Small keys keep the test fast; the plugin never looks at the key.
  rsaKeys = forge.pki.rsa.generateKeyPair({ bits: 1024, e: 0x10001 });
});

/** pemWithGroup: a real, signed PKCS#10 request whose subject has these attributes. */
function pemWithSubject(attributes: { shortName?: string; name?: string; value: string }[]): string {
  const csr = forge.pki.createCertificationRequest();
  csr.publicKey = rsaKeys.publicKey;
  csr.setSubject(attributes);
  csr.sign(rsaKeys.privateKey, forge.md.sha256.create());
  return forge.pki.certificationRequestToPem(csr);
}
const pemWithGroup = (group: string) => pemWithSubject([{ shortName: 'O', value: group }]);
const derOf = (pem: string) => Buffer.from(forge.pem.decode(pem)[0].body, 'binary');

/** An ECDSA P-256 request, built from its ASN.1 and signed by node:crypto (forge signs only RSA). */
function ecdsaPemWithGroup(group: string): string {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const { asn1 } = forge;
  const spki = asn1.fromDer(publicKey.export({ type: 'spki', format: 'der' }).toString('binary'));
  const info = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.INTEGER, false, '\x00'),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SET, true, [
        asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
          asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer('2.5.4.10').getBytes()),
          asn1.create(asn1.Class.UNIVERSAL, asn1.Type.UTF8, false, forge.util.encodeUtf8(group)),
        ]),
      ]),
    ]),
    spki,
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, []),
  ]);
  const infoDer = asn1.toDer(info).getBytes();
  const signature = createSign('sha256').update(Buffer.from(infoDer, 'binary')).sign(privateKey).toString('binary');
  const request = asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
    info,
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, [
      asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer('1.2.840.10045.4.3.2').getBytes()),
    ]),
    asn1.create(asn1.Class.UNIVERSAL, asn1.Type.BITSTRING, false, `\x00${signature}`),
  ]);
  return forge.pem.encode({ type: 'CERTIFICATE REQUEST', body: asn1.toDer(request).getBytes() });
}

function csr(request: string, signerName: string, name?: string): KubeObject {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: name === undefined ? {} : { name },
    spec: { request: Buffer.from(request).toString('base64'), signerName, usages: ['client auth'] },
  };
}

const validate = (input: ReviewInput) => runPhase(plugin, 'validate', { ...CSRS, ...input });
const expectAllowed = (result: Awaited<ReturnType<typeof validate>>) =>
  expect(result.wire.response).toEqual({ uid: result.wire.response!.uid, allowed: true });

describe('TestPlugin_Validate', () => {
  it('ignored resource', async () => {
    expectAllowed(
      await validate({
        kind: { group: 'foo', kind: 'Bar' },
        resource: { group: 'foo', resource: 'bar' },
        object: csr(pemWithGroup('system:masters'), CLIENT_SIGNER),
      }),
    );
  });

  it('ignored subresource', async () => {
    expectAllowed(
      await validate({ subResource: 'approve', object: csr(pemWithGroup('system:masters'), CLIENT_SIGNER, 'panda') }),
    );
  });

  it('wrong type', async () => {
    const list: KubeObject = {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequestList',
      metadata: {},
      items: [],
    };
    const result = await validate({ object: list, name: 'panda' });
    expect(deniedMessage(result)).toBe(
      'certificatesigningrequests.certificates.k8s.io "panda" is forbidden: expected type CertificateSigningRequest, got: *certificates.CertificateSigningRequestList',
    );
  });

  it('some other signer', async () => {
    expectAllowed(await validate({ object: csr(pemWithGroup('system:masters'), KUBELET_CLIENT_SIGNER) }));
  });

  it('invalid request', async () => {
    const result = await validate({ object: csr('this is not a CSR', CLIENT_SIGNER, 'bear') });
    expect(deniedMessage(result)).toBe(
      'certificatesigningrequests.certificates.k8s.io "bear" is forbidden: failed to parse CSR: PEM block type must be CERTIFICATE REQUEST',
    );
    expect(result.wire.response!.status).toMatchObject({ code: 403, reason: 'Forbidden' });
  });

  it('some other group', async () => {
    expectAllowed(await validate({ object: csr(pemWithGroup('system:admin'), CLIENT_SIGNER) }));
  });

  it('request for system:masters', async () => {
    const result = await validate({ object: csr(pemWithGroup('system:masters'), CLIENT_SIGNER, 'pooh') });
    expect(deniedMessage(result)).toBe(
      'certificatesigningrequests.certificates.k8s.io "pooh" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
    );
    expect(result.wire.response!.status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      status: 'Failure',
      details: { name: 'pooh', group: 'certificates.k8s.io', kind: 'certificatesigningrequests' },
    });
  });
});

describe('the subject as Go reads it', () => {
  it('finds system:masters among several organizations and next to a common name', async () => {
    const pem = pemWithSubject([
      { shortName: 'CN', value: 'alice' },
      { shortName: 'O', value: 'developers' },
      { shortName: 'O', value: 'system:masters' },
    ]);
    expect(deniedMessage(await validate({ object: csr(pem, CLIENT_SIGNER, 'x') }))).toContain(
      'with system:masters group is not allowed',
    );
  });

  it('does not confuse a common name of system:masters with the group', async () => {
    expectAllowed(
      await validate({ object: csr(pemWithSubject([{ shortName: 'CN', value: 'system:masters' }]), CLIENT_SIGNER) }),
    );
  });

  it('compares the group exactly (case and prefixes matter)', async () => {
    for (const group of ['System:Masters', 'system:masters-lite', 'system:master']) {
      expectAllowed(await validate({ object: csr(pemWithGroup(group), CLIENT_SIGNER) }));
    }
  });

  it('reads ECDSA requests, which kubelets and most tools send', async () => {
    const result = await validate({ object: csr(ecdsaPemWithGroup('system:masters'), CLIENT_SIGNER, 'ec') });
    expect(deniedMessage(result)).toBe(
      'certificatesigningrequests.certificates.k8s.io "ec" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
    );
    expectAllowed(await validate({ object: csr(ecdsaPemWithGroup('system:authenticated'), CLIENT_SIGNER) }));
  });

  it('takes the first PEM block: a certificate first is not a request', async () => {
    const pem = `-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n${pemWithGroup('system:masters')}`;
    expect(deniedMessage(await validate({ object: csr(pem, CLIENT_SIGNER, 'two') }))).toBe(
      'certificatesigningrequests.certificates.k8s.io "two" is forbidden: failed to parse CSR: PEM block type must be CERTIFICATE REQUEST',
    );
  });

  it('an empty request block fails as Go fails it', async () => {
    const result = await validate({
      object: csr('-----BEGIN CERTIFICATE REQUEST-----\n-----END CERTIFICATE REQUEST-----', CLIENT_SIGNER, 'empty'),
    });
    expect(deniedMessage(result)).toBe(
      'certificatesigningrequests.certificates.k8s.io "empty" is forbidden: failed to parse CSR: asn1: syntax error: sequence truncated',
    );
  });

  it("refuses a version Go's asn1 would not decode into an int", async () => {
    /** A real request with its version INTEGER's content replaced and the lengths around it rewritten. */
    const withVersion = (content: number[]) => {
      const der = derOf(pemWithGroup('system:masters'));
      const headerLength = (at: number) => (der[at + 1] & 0x80 ? 2 + (der[at + 1] & 0x7f) : 2);
      const bodyLength = (at: number) =>
        der[at + 1] & 0x80 ? der.readUIntBE(at + 2, der[at + 1] & 0x7f) : der[at + 1];
      const element = (tag: number, body: Buffer) => {
        const n = body.length;
        const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
        return Buffer.concat([Buffer.from([tag, ...length]), body]);
      };
      const infoAt = headerLength(0);
      const versionAt = infoAt + headerLength(infoAt);
      const infoEnd = versionAt + bodyLength(infoAt);
      expect([...der.subarray(versionAt, versionAt + 3)]).toEqual([0x02, 0x01, 0x00]);
      const info = element(
        0x30,
        Buffer.concat([element(0x02, Buffer.from(content)), der.subarray(versionAt + 3, infoEnd)]),
      );
      const request = element(0x30, Buffer.concat([info, der.subarray(infoEnd)]));
      return csr(
        forge.pem.encode({ type: 'CERTIFICATE REQUEST', body: request.toString('binary') }),
        CLIENT_SIGNER,
        'v',
      );
    };
    // Unchanged, the rewritten request reads as the original.
    expect(deniedMessage(await validate({ object: withVersion([0x00]) }))).toContain(
      'with system:masters group is not allowed',
    );
    for (const [content, reason] of [
      [[], 'empty integer'],
      [[0x00, 0x01], 'integer not minimally-encoded'],
      [[0xff, 0x80], 'integer not minimally-encoded'],
      [[1, 2, 3, 4, 5, 6, 7, 8, 9], 'integer too large'],
    ] as const) {
      expect(deniedMessage(await validate({ object: withVersion([...content]) }))).toBe(
        `certificatesigningrequests.certificates.k8s.io "v" is forbidden: failed to parse CSR: asn1: structure error: ${reason}`,
      );
    }
    // A version that is not 0 but decodes is read on: the group decides.
    expect(deniedMessage(await validate({ object: withVersion([0x7f]) }))).toContain(
      'with system:masters group is not allowed',
    );
  });

  it('a request block that is not DER of a request is refused, never allowed', async () => {
    const body = Buffer.from('not der at all').toString('base64');
    const result = await validate({
      object: csr(
        `-----BEGIN CERTIFICATE REQUEST-----\n${body}\n-----END CERTIFICATE REQUEST-----\n`,
        CLIENT_SIGNER,
        'junk',
      ),
    });
    expect(deniedMessage(result)).toMatch(
      /^certificatesigningrequests\.certificates\.k8s\.io "junk" is forbidden: failed to parse CSR: asn1: /,
    );
  });
});

describe('other resources and subresources are ignored', () => {
  const masters = () => csr(pemWithGroup('system:masters'), CLIENT_SIGNER, 'c');
  it.each([
    { name: 'csr approval subresource', kind: CSRS.kind, resource: CSRS.resource, subResource: 'approval' },
    { name: 'csr status subresource', kind: CSRS.kind, resource: CSRS.resource, subResource: 'status' },
    {
      name: 'certificatesigningrequests of another group',
      kind: { group: 'example.com', kind: 'CertificateSigningRequest' },
      resource: { group: 'example.com', resource: 'certificatesigningrequests' },
      subResource: undefined,
    },
    {
      name: 'another resource of certificates.k8s.io',
      kind: { group: 'certificates.k8s.io', kind: 'ClusterTrustBundle' },
      resource: { group: 'certificates.k8s.io', resource: 'clustertrustbundles' },
      subResource: undefined,
    },
  ])('$name', async ({ kind, resource, subResource }) => {
    expectAllowed(await runPhase(plugin, 'validate', { object: masters(), kind, resource, subResource }));
  });

  it('declares only CSR creates in its webhook rules', () => {
    expect(plugin.metadata.validating!.rules).toEqual([
      {
        operations: ['CREATE'],
        apiGroups: ['certificates.k8s.io'],
        apiVersions: ['v1'],
        resources: ['certificatesigningrequests'],
        scope: 'Cluster',
      },
    ]);
    expect(plugin.metadata.mutating).toBeUndefined();
    expect(plugin.metadata.validating).toMatchObject({ failurePolicy: 'Fail', timeoutSeconds: 3 });
  });
});

describe('handles these operations', () => {
  itHandles(plugin, ['CREATE'], {
    object: () => csr(pemWithGroup('system:masters'), CLIENT_SIGNER, 'c'),
    input: { ...CSRS, name: 'c' },
  });

  it('answers a v1beta1 review in kind, with the same uid', async () => {
    const result = await validate({
      apiVersion: 'admission.k8s.io/v1beta1',
      uid: 'beta-uid',
      object: csr(pemWithGroup('system:masters'), CLIENT_SIGNER, 'b'),
    });
    expect(result.wire.apiVersion).toBe('admission.k8s.io/v1beta1');
    expect(result.wire.response).toMatchObject({ uid: 'beta-uid', allowed: false, status: { code: 403 } });
  });
});

describe('the DER reader agrees with node-forge on real requests and their corruptions', () => {
  /**
   * A string value as Go's encoding/asn1 decodes it (written from Go's rules, independently of the
   * reader under test): each type's alphabet is checked and a violation fails the whole request.
   */
  function goString(type: number, bytes: string): string | undefined {
    const { Type } = forge.asn1;
    const only = (pattern: RegExp) => {
      if (!pattern.test(bytes)) throw new Error('invalid character');
      return bytes;
    };
    switch (type) {
      case Type.UTF8: {
        const text = Buffer.from(bytes, 'binary').toString('utf8');
        if (!Buffer.from(text, 'utf8').equals(Buffer.from(bytes, 'binary'))) throw new Error('invalid UTF-8');
        return text;
      }
      case Type.PRINTABLESTRING:
        return only(/^[A-Za-z0-9 '()+,\-./:=?*&]*$/);
      case Type.IA5STRING:
        // biome-ignore lint/suspicious/noControlCharactersInRegex: IA5 is 7-bit ASCII, control characters included.
        return only(/^[\u0000-\u007f]*$/);
      case 18: // NumericString
        return only(/^[0-9 ]*$/);
      case 20: // T61String
        return bytes;
      case 30: {
        // BMPString
        if (bytes.length % 2 !== 0) throw new Error('odd-length BMP string');
        let text = '';
        for (let i = 0; i < bytes.length; i += 2)
          text += String.fromCharCode((bytes.charCodeAt(i) << 8) | bytes.charCodeAt(i + 1));
        return text;
      }
      default:
        return undefined;
    }
  }

  /** The subject as node-forge's strict DER parser reads it (the reader this one replaced). */
  function forgeSubject(der: Buffer): { commonName: string; organization: string[] } | 'error' | 'unknown' {
    try {
      const fromDer = forge.asn1.fromDer as unknown as (b: string, o: object) => forge.asn1.Asn1;
      const { Class, Type } = forge.asn1;
      const must = (node: forge.asn1.Asn1 | undefined, type: number, constructed: boolean) => {
        if (
          !node ||
          node.tagClass !== Class.UNIVERSAL ||
          node.type !== type ||
          node.constructed !== constructed ||
          Array.isArray(node.value) !== constructed
        )
          throw new Error('structure');
        return node;
      };
      // Where node-forge does not read bytes as Go does, they are no reference:
      // - it decodes any tag 30 as UTF-16, whatever its class (Go: only a universal BMPString, which
      //   goString decodes here): read with that decoding switched off, every value stays raw;
      // - it accepts lengths DER forbids (long form for a short length, leading zeros) that Go
      //   refuses: its tree, written back as DER, is not the input;
      // - it does not read the high-tag-number form: it takes 0x1f's tag as 31 and the next byte
      //   as a length, where Go reads the tag number there.
      const types = Type as { BMPSTRING: number };
      const bmp = types.BMPSTRING;
      let tree: forge.asn1.Asn1;
      let canonical: boolean;
      try {
        types.BMPSTRING = -1;
        tree = fromDer(der.toString('binary'), { strict: true, parseAllBytes: true, decodeBitStrings: false });
        canonical = forge.asn1.toDer(tree).getBytes() === der.toString('binary');
      } finally {
        types.BMPSTRING = bmp;
      }
      const hasHighTagForm = (node: forge.asn1.Asn1): boolean =>
        (node.type as number) === 0x1f || (Array.isArray(node.value) && node.value.some(hasHighTagForm));
      if (!canonical || hasHighTagForm(tree)) return 'unknown';
      const request = must(tree, Type.SEQUENCE, true);
      const [infoNode, algorithm, signature] = request.value as forge.asn1.Asn1[];
      const info = must(infoNode, Type.SEQUENCE, true);
      must(algorithm, Type.SEQUENCE, true);
      must(signature, Type.BITSTRING, false);
      must((info.value as forge.asn1.Asn1[])[0], Type.INTEGER, false);
      const subject = must((info.value as forge.asn1.Asn1[])[1], Type.SEQUENCE, true);
      const publicKeyInfo = must((info.value as forge.asn1.Asn1[])[2], Type.SEQUENCE, true);
      must((publicKeyInfo.value as forge.asn1.Asn1[])[0], Type.SEQUENCE, true);
      must((publicKeyInfo.value as forge.asn1.Asn1[])[1], Type.BITSTRING, false);
      let commonName = '';
      const organization: string[] = [];
      for (const rdn of subject.value as forge.asn1.Asn1[]) {
        for (const atv of must(rdn, Type.SET, true).value as forge.asn1.Asn1[]) {
          const [oid, value] = must(atv, Type.SEQUENCE, true).value as forge.asn1.Asn1[];
          must(oid, Type.OID, false);
          if (!value) throw new Error('structure');
          if (value.constructed || value.tagClass !== Class.UNIVERSAL) continue;
          const text = goString(value.type, value.value as string);
          if (text === undefined) continue;
          const type = forge.asn1.derToOid(oid.value as string);
          if (type === '2.5.4.3') commonName = text;
          if (type === '2.5.4.10') organization.push(text);
        }
      }
      return { commonName, organization };
    } catch (error) {
      // node-forge reads tag numbers above 30 only up to 32 bits of length; Go reads them, so such
      // bytes are no reference for what Go would do.
      if (/Only 8, 16, 24, or 32 bits supported/.test((error as Error).message)) return 'unknown';
      return 'error';
    }
  }
  const ours = (der: Buffer) => {
    try {
      return parseCertificateRequestSubject(
        Buffer.from(forge.pem.encode({ type: 'CERTIFICATE REQUEST', body: der.toString('binary') })).toString('base64'),
      );
    } catch (error) {
      expect(error).toBeInstanceOf(CertificateRequestParseError);
      return 'error' as const;
    }
  };

  it('reads the same subject from real RSA and ECDSA requests', () => {
    for (const pem of [
      pemWithSubject([
        { shortName: 'CN', value: 'system:node:n1' },
        { shortName: 'O', value: 'system:nodes' },
        { shortName: 'O', value: 'ünïcode' },
      ]),
      ecdsaPemWithGroup('system:masters'),
    ]) {
      expect(ours(derOf(pem))).toEqual(forgeSubject(derOf(pem)));
    }
  });

  it('on corrupted bytes, accepts what node-forge accepts with the same subject, and fails only with a parse error', () => {
    const base = derOf(
      pemWithSubject([
        { shortName: 'CN', value: 'alice' },
        { shortName: 'O', value: 'team' },
      ]),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(base.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 3 }),
        fc.nat(base.length),
        (edits, cut) => {
          const der = Buffer.from(base.subarray(0, Math.max(1, cut)));
          for (const [at, byte] of edits) if (at < der.length) der[at] = byte;
          const reference = forgeSubject(der);
          fc.pre(reference !== 'unknown');
          const result = ours(der);
          expect(result === 'error').toBe(reference === 'error');
          if (reference !== 'error' && result !== 'error') expect(result).toEqual(reference);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
