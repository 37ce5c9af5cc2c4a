// network.openshift.io/ExternalIPRanger as a ValidatingAdmissionPolicy (Kubernetes 1.31+, for
// CEL's ip and cidr libraries): the configured CIDRs compiled in, every external IP judged in
// order with OpenShift's field errors aggregated, and, where some IP is refused, the apiserver's
// own authorizer asked as OpenShift asks it (`create service/externalips` in network.openshift.io),
// beside the entry's allowedUsers/allowedGroups.
import type { ExternalIPRangerConfig } from '../../../functions/external-ip-ranger/plugin.js';
import plugin from '../../../functions/external-ip-ranger/plugin.js';
import { allowlisted, cidrText, ipLibrariesUnavailable, listed } from '../cel.js';
import { atLeast, celStrings, requiring, webhookRules } from '../policy.js';

const PATH = 'spec.externalIPs';

/** One IP's field error, or '' (`i` its index, `ip` its text). */
function ipError(config: ExternalIPRangerConfig, i: string, ip: string): string {
  const contained = (nets: readonly string[]) => `${celStrings(nets)}.exists(c, cidr(c).containsIP(${ip}))`;
  const reject = config.reject.map(cidrText);
  const admit = config.admit.map(cidrText);
  const refused = [
    ...(reject.length > 0 ? [contained(reject)] : []),
    ...(admit.length > 0 ? [`!${contained(admit)}`] : []),
  ].join(' || ');
  return `!isIP(${ip}) ? '${PATH}[' + string(${i}) + ']: Forbidden: externalIPs must be a valid address' : ${ip} != variables.ingressIP && (${refused}) ? '${PATH}[' + string(${i}) + ']: Forbidden: externalIP is not allowed' : ''`;
}

export const externalIpRanger = requiring<ExternalIPRangerConfig>(
  'external-ip-ranger',
  ipLibrariesUnavailable,
  (config, version) => {
    // No entry: OpenShift disables the plugin (and so is it inactive here).
    if (!config.enabled) return { policies: [] };
    const disabled = config.admit.length === 0 && config.reject.length === 0;
    // Two-variable comprehensions (1.33+) give each IP its index; before, the first equal IP's.
    const indexed = atLeast(version, '1.33');
    const errors = disabled
      ? `size(variables.ips) > 0 && !(size(variables.ips) == 1 && variables.ips[0] == variables.ingressIP) ? ['${PATH}: Forbidden: externalIPs have been disabled'] : []`
      : indexed
        ? `variables.ips.transformList(i, ip, ${ipError(config, 'i', 'ip')}).filter(e, e != '')`
        : `variables.ips.map(ip, ${ipError(config, 'variables.ips.indexOf(ip)', 'ip')}).filter(e, e != '')`;
    return {
      policies: [
        {
          kind: 'ValidatingAdmissionPolicy',
          rules: webhookRules(plugin, 'validating'),
          variables: [
            { name: 'ips', expression: 'object.spec.?externalIPs.orValue([])' },
            {
              // The first load balancer ingress IP of the stored Service may stay (allowIngressIP).
              name: 'ingressIP',
              expression: config.allowIngressIP
                ? "request.operation == 'UPDATE' && object.spec.?type.orValue('') == 'LoadBalancer' && oldObject != null && size(oldObject.?status.?loadBalancer.?ingress.orValue([])) > 0 ? oldObject.status.loadBalancer.ingress[0].?ip.orValue('') : ''"
                : "''",
            },
            { name: 'errors', expression: errors },
          ],
          validations: [
            {
              expression: `size(variables.errors) == 0 || authorizer.group('network.openshift.io').resource('service').subresource('externalips').check('create').allowed() || ${allowlisted(config.allowlist)}`,
              // string(): the disabled case's list is list(dyn) to the type checker.
              messageExpression: `string(${listed('variables.errors')})`,
            },
          ],
        },
      ],
      differences: [
        'the apiserver authorizer decides who may set any external IP (OpenShift: create service/externalips in network.openshift.io); allowedUsers and allowedGroups still pass',
        "an external IP CEL's ip() refuses but Go reads loosely (leading zeros, IPv4-mapped IPv6) is refused as not a valid address",
        ...(indexed ? [] : ['a repeated external IP is reported at its first index']),
      ],
    };
  },
);
