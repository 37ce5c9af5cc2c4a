// CertificateSubjectRestriction: a client certificate whose subject carries the organization
// system:masters is a cluster-admin credential that no RBAC binding can take away. Anyone allowed
// to create and approve CertificateSigningRequests for the kube-apiserver-client signer could mint
// one, so such requests are refused outright, whoever asks. Upstream:
// plugin/pkg/admission/certificates/subjectrestriction (CSR parsing: pkg/apis/certificates.ParseCSR).
//
// Validating only: upstream only validates. No configuration.

import { allowed, forbidden } from '../../lib/admission/decision.js';
import type { ObjectGuard } from '../../lib/admission/plugin.js';
import { definePlugin, guardedPhase, judgedResource, validatingOnly } from '../../lib/admission/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { CertificateRequestParseError, parseCertificateRequestSubject } from '../../lib/kube/csr.js';
import { goTypeName, ofKind } from '../../lib/kube/objects.js';

const KUBE_APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
const SYSTEM_MASTERS = 'system:masters';

interface CertificateSigningRequest extends KubeObject {
  spec?: { signerName?: string; request?: string };
}

const CSR_CREATES = judgedResource(['CREATE'], 'certificates.k8s.io', 'certificatesigningrequests', 'Cluster');

const CSRS: ObjectGuard<CertificateSigningRequest> = {
  // Only creates of the CSR itself: approval and status subresources are left alone, as upstream.
  ignore: CSR_CREATES.ignore,
  accepts: ofKind<CertificateSigningRequest>('CertificateSigningRequest'),
  otherwise: (request) =>
    forbidden(request, [`expected type CertificateSigningRequest, got: ${goTypeName(request.object)}`]),
};

export default definePlugin({
  metadata: {
    upstreamName: 'CertificateSubjectRestriction',
    name: 'certificate-subject-restriction',
    summary:
      'Refuses CertificateSigningRequests for the kube-apiserver-client signer that ask for the system:masters group.',
    ...validatingOnly(CSR_CREATES.rules),
    writes: false,
    needs: [],
    // CSRs are cluster-scoped, so no namespaceSelector can skip them anyway; 'include' says so.
    systemNamespaces: 'include',
  },

  validate: guardedPhase(CSRS, (csr, request) => {
    if (csr.spec?.signerName !== KUBE_APISERVER_CLIENT_SIGNER) return allowed();
    let organization: readonly string[];
    try {
      ({ organization } = parseCertificateRequestSubject(csr.spec.request));
    } catch (error) {
      if (!(error instanceof CertificateRequestParseError)) throw error;
      return forbidden(request, [`failed to parse CSR: ${error.message}`]);
    }
    if (organization.includes(SYSTEM_MASTERS)) {
      return forbidden(request, [
        `use of ${KUBE_APISERVER_CLIENT_SIGNER} signer with ${SYSTEM_MASTERS} group is not allowed`,
      ]);
    }
    return allowed();
  }),
});
