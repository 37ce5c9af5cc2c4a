// DenyServiceExternalIPs: a Service's spec.externalIPs makes kube-proxy on every node capture
// traffic for those addresses, whoever owns them (CVE-2020-8554). Anyone who may create or edit a
// Service could intercept another tenant's or the internet's traffic, so new external IPs are
// refused; IPs a Service already had may stay or be removed, so existing workloads keep working
// and can be cleaned up. Upstream: plugin/pkg/admission/network/denyserviceexternalips.
//
// Validating only: upstream only validates, and nothing is there to mutate.

import type { AdmissionRequest } from '../../lib/admission/request.js';
import { allowed, errored, forbidden } from '../../lib/admission/decision.js';
import type { ObjectGuard } from '../../lib/admission/plugin.js';
import { definePlugin, guardedPhase, judgedResource, validatingOnly } from '../../lib/admission/plugin.js';
import type { KubeObject } from '../../lib/admission/types.js';
import { isObjectOfKind, ofKind } from '../../lib/kube/objects.js';

interface Service extends KubeObject {
  spec?: { externalIPs?: string[] };
}

const SERVICE_WRITES = judgedResource(['CREATE', 'UPDATE'], '', 'services', 'Namespaced');

const SERVICES: ObjectGuard<Service> = {
  // Other resources and subresources (services/status, services/proxy) are left alone.
  ignore: SERVICE_WRITES.ignore,
  accepts: ofKind<Service>('Service'),
  // apierrors.NewInternalError, as upstream answers an object that is not a Service.
  otherwise: notAService,
};

function notAService(request: AdmissionRequest) {
  const { group, version, kind } = request.kind;
  return errored(
    500,
    'InternalError',
    `Internal error occurred: Expected Service resource, got: ${group}/${version}, Kind=${kind}`,
  );
}

function externalIPs(service: Service): string[] {
  const ips = service.spec?.externalIPs;
  return Array.isArray(ips) ? ips : [];
}

/** Every external IP of the new Service was already on the old one (none at all on a create). */
function addsNoExternalIP(newService: Service, oldService: Service | null): boolean {
  const ips = externalIPs(newService);
  if (ips.length === 0) return true;
  if (oldService === null) return false;
  const before = new Set(externalIPs(oldService));
  return ips.every((ip) => before.has(ip));
}

export default definePlugin({
  metadata: {
    upstreamName: 'DenyServiceExternalIPs',
    name: 'deny-service-external-ips',
    summary: 'Refuses Services that add spec.externalIPs; IPs a Service already has may stay or be removed.',
    ...validatingOnly(SERVICE_WRITES.rules),
    writes: false,
    needs: [],
    systemNamespaces: 'exclude',
  },

  validate: guardedPhase(SERVICES, (service, request) => {
    let oldService: Service | null = null;
    if (request.oldObject !== null) {
      if (!isObjectOfKind<Service>(request.oldObject, 'Service')) return notAService(request);
      oldService = request.oldObject;
    }
    if (addsNoExternalIP(service, oldService)) return allowed();
    return forbidden(request, ['Use of external IPs is denied by admission control']);
  }),
});
