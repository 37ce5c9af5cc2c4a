// Resource names as pkg/apis/core/helper classifies them, for plugins that treat extended
// resources (example.com/gpu) differently from the native ones (cpu, memory, kubernetes.io/...).

const REQUESTS_PREFIX = 'requests.';
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const QUALIFIED_NAME_MAX_LENGTH = 63;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

/** Native: unprefixed (cpu, memory, hugepages-2Mi) or in the kubernetes.io namespace. */
export function isNativeResourceName(name: string): boolean {
  return !name.includes('/') || name.includes('kubernetes.io/');
}

/** validation.IsQualifiedName: an optional DNS subdomain prefix and '/', then a name of up to 63 characters. */
export function isQualifiedName(value: string): boolean {
  const parts = value.split('/');
  if (parts.length > 2) return false;
  const name = parts[parts.length - 1];
  if (parts.length === 2) {
    const prefix = parts[0];
    if (prefix.length === 0 || prefix.length > DNS1123_SUBDOMAIN_MAX_LENGTH || !DNS1123_SUBDOMAIN.test(prefix))
      return false;
  }
  return name.length > 0 && name.length <= QUALIFIED_NAME_MAX_LENGTH && QUALIFIED_NAME.test(name);
}

/**
 * helper.IsExtendedResourceName: not native, not a quota's `requests.` name, and still a qualified
 * name once quota prefixes it with `requests.`.
 */
export function isExtendedResourceName(name: string): boolean {
  if (isNativeResourceName(name) || name.startsWith(REQUESTS_PREFIX)) return false;
  return isQualifiedName(`${REQUESTS_PREFIX}${name}`);
}
