// network.openshift.io/RestrictedEndpointsAdmission as a ValidatingAdmissionPolicy (Kubernetes
// 1.31+, for CEL's ip and cidr libraries): the first restricted address (configured networks, then
// link-local) or machine-config port of an Endpoints or EndpointSlice, unless the apiserver's own
// authorizer lets the user `create endpoints/restricted` (`endpointslices/restricted`) as OpenShift
// asks it, beside the entry's allowedUsers/allowedGroups.
import type { RestrictedEndpointsConfig } from '../../../functions/restricted-endpoints-admission/plugin.js';
import plugin, {
  DEFAULT_RESTRICTED_NETWORKS,
  DEFAULT_RESTRICTED_PORTS,
} from '../../../functions/restricted-endpoints-admission/plugin.js';
import { allowlisted, cidrText, ipLibrariesUnavailable, looseAddress } from '../cel.js';
import { celStrings, requiring, webhookRules } from '../policy.js';

const LINK_LOCAL = DEFAULT_RESTRICTED_NETWORKS.map(cidrText);
const RESTRICTED_PORTS = DEFAULT_RESTRICTED_PORTS.map((p) => `${p.protocol}:${p.port}`);

/** The restricted addresses of `list` (a CEL list of address strings), in order. */
const restrictedIn = (list: string, nets: readonly string[]) =>
  nets.length === 0
    ? '[]'
    : `${list}.filter(ip, ${looseAddress('ip')} || (isIP(ip) && ${celStrings(nets)}.exists(c, cidr(c).containsIP(ip))))`;

/** Per address group, its addresses in `nets` (those with none left out). */
const hits = (nets: readonly string[]) =>
  `variables.addresses.map(g, ${restrictedIn('g', nets)}).filter(l, size(l) > 0)`;

export const restrictedEndpointsAdmission = requiring<RestrictedEndpointsConfig>(
  'restricted-endpoints-admission',
  ipLibrariesUnavailable,
  (config) => {
    // No entry: OpenShift disables the plugin (and so is it inactive here).
    if (!config.enabled) return { policies: [] };
    const configured = config.restrictedNetworks.map(cidrText);
    // Per subset (Endpoints) or endpoint (EndpointSlice): its addresses, ready ones first.
    const groups =
      "variables.isSlice ? object.?endpoints.orValue([]).map(e, e.?addresses.orValue([])) : object.?subsets.orValue([]).map(s, s.?addresses.orValue([]).map(a, a.?ip.orValue('')) + s.?notReadyAddresses.orValue([]).map(a, a.?ip.orValue('')))";
    return {
      policies: [
        {
          kind: 'ValidatingAdmissionPolicy',
          rules: webhookRules(plugin, 'validating'),
          variables: [
            { name: 'isSlice', expression: "request.resource.group == 'discovery.k8s.io'" },
            {
              // An update that leaves addresses and ports as they were passes (reflect.DeepEqual).
              name: 'unchanged',
              expression:
                'oldObject != null && (variables.isSlice ? (has(object.endpoints) == has(oldObject.endpoints) && (!has(object.endpoints) || object.endpoints == oldObject.endpoints) && has(object.ports) == has(oldObject.ports) && (!has(object.ports) || object.ports == oldObject.ports)) : (has(object.subsets) == has(oldObject.subsets) && (!has(object.subsets) || object.subsets == oldObject.subsets)))',
            },
            { name: 'addresses', expression: groups },
            {
              // Per subset (one group for a slice): protocol:port, the protocol TCP when unset.
              name: 'ports',
              expression:
                "variables.isSlice ? [object.?ports.orValue([]).filter(p, has(p.port)).map(p, p.?protocol.orValue('TCP') + ':' + string(p.port))] : object.?subsets.orValue([]).map(s, s.?ports.orValue([]).map(p, p.?protocol.orValue('TCP') + ':' + string(p.port)))",
            },
            // Per group, its restricted addresses; groups without any dropped.
            { name: 'configuredHits', expression: hits(configured) },
            { name: 'linkLocalHits', expression: hits(LINK_LOCAL) },
            {
              // The first in the configured networks, else the first link-local one.
              name: 'restrictedAddress',
              expression:
                "size(variables.configuredHits) > 0 ? variables.configuredHits[0][0] : size(variables.linkLocalHits) > 0 ? variables.linkLocalHits[0][0] : ''",
            },
            {
              name: 'restrictedPort',
              expression: `variables.ports.map(l, l.filter(p, p in ${celStrings(RESTRICTED_PORTS)})).filter(l, size(l) > 0).map(l, l[0])`,
            },
            {
              name: 'violation',
              expression:
                "variables.unchanged ? '' : variables.restrictedAddress != '' ? 'endpoint address ' + variables.restrictedAddress + ' is not allowed' : size(variables.restrictedPort) > 0 ? 'endpoint port ' + variables.restrictedPort[0] + ' is not allowed' : ''",
            },
          ],
          validations: [
            {
              expression: `variables.violation == '' || authorizer.group(variables.isSlice ? 'discovery.k8s.io' : '').resource(variables.isSlice ? 'endpointslices' : 'endpoints').subresource('restricted').namespace(request.?namespace.orValue('')).name(request.?name.orValue('')).check('create').allowed() || ${allowlisted(config.allowlist)}`,
              messageExpression: 'variables.violation',
            },
          ],
        },
      ],
      differences: [
        'the apiserver authorizer decides who may write restricted endpoints (OpenShift: create endpoints/restricted, endpointslices/restricted); allowedUsers and allowedGroups still pass',
        "an address CEL's ip() refuses but Go reads loosely (leading zeros, IPv4-mapped IPv6) counts as restricted",
      ],
    };
  },
);
