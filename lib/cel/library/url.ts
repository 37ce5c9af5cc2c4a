// Go's net/url as Kubernetes' url library uses it (k8s.io/apiserver/pkg/cel/library/urls.go):
// `url()` and `isURL()` accept what url.ParseRequestURI accepts (an absolute URI or an absolute
// path; a fragment is not split off there), and the URL's parts are those url.Parse gives (which
// does split it off). Errors read as Go's: `parse "<text>": invalid port ":c" after host`.
// Go's escaping works on UTF-8 bytes, so this file does too.

export interface GoUrl {
  readonly scheme: string;
  readonly opaque: string;
  /** Host or host:port, unescaped, userinfo removed. */
  readonly host: string;
  readonly path: string;
  /** The path as written, when it differs from the path's default escaping. */
  readonly rawPath: string;
  readonly rawQuery: string;
}

export class UrlError extends Error {
  override readonly name = 'UrlError';
}

type Mode = 'path' | 'host' | 'zone' | 'userPassword' | 'queryComponent' | 'fragment';

const isAlnum = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39);
const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
const hexValue = (c: number) => (c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10);
const utf8 = (s: string) => Buffer.from(s, 'utf8');

/** net/url shouldEscape: whether byte c must be escaped in a part of the URL. */
function shouldEscape(c: number, mode: Mode): boolean {
  if (isAlnum(c)) return false;
  const ch = String.fromCharCode(c);
  if ((mode === 'host' || mode === 'zone') && `!$&'()*+,;=:[]<>"`.includes(ch)) return false;
  if ('-_.~'.includes(ch)) return false;
  if ('$&+,/:;=?@'.includes(ch)) {
    switch (mode) {
      case 'path':
        return ch === '?';
      case 'userPassword':
        return ch === '@' || ch === '/' || ch === '?' || ch === ':';
      case 'queryComponent':
        return true;
      case 'fragment':
        return false;
      default:
        break;
    }
  }
  if (mode === 'fragment' && '!()*'.includes(ch)) return false;
  return true;
}

/** net/url unescape: %XX decoded (and `+` as a space in a query component), or Go's error. */
function goUnescape(text: string, mode: Mode): string {
  const s = utf8(text);
  let plus = false;
  for (let i = 0; i < s.length; ) {
    const c = s[i];
    if (c === 0x25) {
      if (i + 2 >= s.length || !isHex(s[i + 1]) || !isHex(s[i + 2]))
        throw new UrlError(`invalid URL escape ${JSON.stringify(s.subarray(i, i + 3).toString('utf8'))}`);
      const sequence = s.subarray(i, i + 3).toString('latin1');
      if (mode === 'host' && hexValue(s[i + 1]) < 8 && sequence !== '%25')
        throw new UrlError(`invalid URL escape ${JSON.stringify(sequence)}`);
      if (mode === 'zone') {
        const v = (hexValue(s[i + 1]) << 4) | hexValue(s[i + 2]);
        if (sequence !== '%25' && v !== 0x20 && shouldEscape(v, 'host'))
          throw new UrlError(`invalid URL escape ${JSON.stringify(sequence)}`);
      }
      i += 3;
    } else {
      if (c === 0x2b) plus = mode === 'queryComponent';
      else if ((mode === 'host' || mode === 'zone') && c < 0x80 && shouldEscape(c, mode))
        throw new UrlError(`invalid character ${JSON.stringify(String.fromCharCode(c))} in host name`);
      i++;
    }
  }
  if (!text.includes('%') && !plus) return text;
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === 0x25) {
      out.push((hexValue(s[i + 1]) << 4) | hexValue(s[i + 2]));
      i += 2;
    } else out.push(c === 0x2b && mode === 'queryComponent' ? 0x20 : c);
  }
  return Buffer.from(out).toString('utf8');
}

/** net/url escape, for the path. */
function goEscape(text: string, mode: Mode): string {
  let out = '';
  for (const c of utf8(text)) {
    out += shouldEscape(c, mode) ? `%${c.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(c);
  }
  return out;
}

/** net/url validEncoded: every byte is allowed unescaped in this part, or is part of an escape. */
function validEncoded(text: string, mode: Mode): boolean {
  for (const c of utf8(text)) {
    if ("!$&'()*+,;=:@[]%".includes(String.fromCharCode(c))) continue;
    if (shouldEscape(c, mode)) return false;
  }
  return true;
}

function validOptionalPort(port: string): boolean {
  return port === '' || /^:[0-9]*$/.test(port);
}

function parseHost(host: string): string {
  if (host.startsWith('[')) {
    const close = host.lastIndexOf(']');
    if (close < 0) throw new UrlError("missing ']' in host");
    const colonPort = host.slice(close + 1);
    if (!validOptionalPort(colonPort)) throw new UrlError(`invalid port ${JSON.stringify(colonPort)} after host`);
    const zone = host.slice(0, close).indexOf('%25');
    if (zone >= 0) {
      return (
        goUnescape(host.slice(0, zone), 'host') +
        goUnescape(host.slice(zone, close), 'zone') +
        goUnescape(host.slice(close), 'host')
      );
    }
  } else {
    const colon = host.lastIndexOf(':');
    if (colon !== -1) {
      const colonPort = host.slice(colon);
      if (!validOptionalPort(colonPort)) throw new UrlError(`invalid port ${JSON.stringify(colonPort)} after host`);
    }
  }
  return goUnescape(host, 'host');
}

const USERINFO = /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/;

function parseAuthority(authority: string): string {
  const at = authority.lastIndexOf('@');
  const host = parseHost(at < 0 ? authority : authority.slice(at + 1));
  if (at < 0) return host;
  const userinfo = authority.slice(0, at);
  if (!USERINFO.test(userinfo)) throw new UrlError('net/url: invalid userinfo');
  for (const part of userinfo.split(':', 2)) goUnescape(part, 'userPassword');
  return host;
}

function scheme(raw: string): [string, string] {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) continue;
    if ((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e) {
      if (i === 0) return ['', raw];
      continue;
    }
    if (c === 0x3a) {
      if (i === 0) throw new UrlError('missing protocol scheme');
      return [raw.slice(0, i), raw.slice(i + 1)];
    }
    return ['', raw];
  }
  return ['', raw];
}

function parse(raw: string, viaRequest: boolean): GoUrl {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: Go's stringContainsCTLByte.
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new UrlError('net/url: invalid control character in URL');
  if (raw === '' && viaRequest) throw new UrlError('empty url');
  const url = { scheme: '', opaque: '', host: '', path: '', rawPath: '', rawQuery: '' };
  if (raw === '*') return { ...url, path: '*' };
  let [schemeText, rest] = scheme(raw);
  url.scheme = schemeText.toLowerCase();
  if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) rest = rest.slice(0, -1);
  else {
    const q = rest.indexOf('?');
    if (q >= 0) {
      url.rawQuery = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }
  if (!rest.startsWith('/')) {
    if (url.scheme !== '') return { ...url, opaque: rest };
    if (viaRequest) throw new UrlError('invalid URI for request');
    const colon = rest.indexOf(':');
    const slash = rest.indexOf('/');
    if (colon >= 0 && (slash < 0 || colon < slash))
      throw new UrlError('first path segment in URL cannot contain colon');
  }
  if ((url.scheme !== '' || (!viaRequest && !rest.startsWith('///'))) && rest.startsWith('//')) {
    const end = rest.indexOf('/', 2);
    const authority = end < 0 ? rest.slice(2) : rest.slice(2, end);
    rest = end < 0 ? '' : rest.slice(end);
    url.host = parseAuthority(authority);
  }
  url.path = goUnescape(rest, 'path');
  url.rawPath = goEscape(url.path, 'path') === rest ? '' : rest;
  return url;
}

const wrap = (raw: string, parseOnce: () => GoUrl): GoUrl => {
  try {
    return parseOnce();
  } catch (error) {
    if (error instanceof UrlError) throw new UrlError(`parse ${JSON.stringify(raw)}: ${error.message}`);
    throw error;
  }
};

/** url.ParseRequestURI. */
export function parseRequestURI(raw: string): GoUrl {
  return wrap(raw, () => parse(raw, true));
}

/** url.Parse: the fragment split off first (and its escapes checked). */
export function parseURL(raw: string): GoUrl {
  return wrap(raw, () => {
    const hash = raw.indexOf('#');
    const url = parse(hash < 0 ? raw : raw.slice(0, hash), false);
    if (hash >= 0) goUnescape(raw.slice(hash + 1), 'fragment');
    return url;
  });
}

/** URL.EscapedPath. */
export function escapedPath(url: GoUrl): string {
  if (url.rawPath !== '' && validEncoded(url.rawPath, 'path')) {
    try {
      if (goUnescape(url.rawPath, 'path') === url.path) return url.rawPath;
    } catch {
      // fall through to the default escaping, as Go does
    }
  }
  if (url.path === '*') return '*';
  return goEscape(url.path, 'path');
}

function splitHostPort(hostPort: string): [string, string] {
  let host = hostPort;
  let port = '';
  const colon = host.lastIndexOf(':');
  if (colon !== -1 && validOptionalPort(host.slice(colon))) {
    port = host.slice(colon + 1);
    host = host.slice(0, colon);
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return [host, port];
}

/** URL.Hostname: the host without port, IPv6 brackets removed. */
export const hostname = (url: GoUrl): string => splitHostPort(url.host)[0];
/** URL.Port. */
export const port = (url: GoUrl): string => splitHostPort(url.host)[1];

/** URL.Query (url.ParseQuery, malformed pairs skipped as Go does). */
export function query(url: GoUrl): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const pair of url.rawQuery.split('&')) {
    if (pair === '' || pair.includes(';')) continue;
    const eq = pair.indexOf('=');
    try {
      const key = goUnescape(eq < 0 ? pair : pair.slice(0, eq), 'queryComponent');
      const value = goUnescape(eq < 0 ? '' : pair.slice(eq + 1), 'queryComponent');
      const values = out.get(key);
      if (values) values.push(value);
      else out.set(key, [value]);
    } catch (error) {
      if (!(error instanceof UrlError)) throw error;
    }
  }
  return out;
}
