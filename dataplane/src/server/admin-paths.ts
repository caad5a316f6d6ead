/**
 * Administrative paths (a dashboard, SSO, a login page) that products of this kind serve and
 * this one never serves on its public port. A proxy or a browser in front of the gateway
 * may read `/UI`, `//ui/`, `/%75i`, `/x/../ui` or `/ui;jsessionid=1` as `/ui`, so the check
 * runs on the path as such a reader would understand it, not on the bytes as sent.
 */

const ADMIN_SEGMENTS: ReadonlySet<string> = new Set(['ui', 'sso', 'login']);

/** Enough for any honest URL; a path encoded deeper than this is refused as administrative. */
const MAX_DECODE_ROUNDS = 4;

/** One round of %XX decoding that never throws (a stray `%` stays as it is). */
function decodeOnce(s: string): string {
  return s.replace(/%([0-9a-fA-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/**
 * The path's segments after decoding (repeatedly: `%252F` is `/` to a second decoder),
 * lower-casing, dropping `;params`, empty segments and `.`, and resolving `..`.
 * Undefined when the path is still encoded after the last round.
 */
export function canonicalSegments(url: string): string[] | undefined {
  // An absolute-form target (`GET http://host/ui`) names its path after the authority.
  let path = (url.split(/[?#]/, 1)[0] ?? '').replace(/^[a-z][a-z0-9+.-]*:\/\/[^/\\]*/i, '');
  for (let round = 0; ; round++) {
    const decoded = decodeOnce(path);
    if (decoded === path) break;
    if (round === MAX_DECODE_ROUNDS) return undefined;
    path = decoded;
  }
  const out: string[] = [];
  // Backslashes are separators to some proxies and to WHATWG URL parsing of special schemes.
  for (const raw of path.toLowerCase().split(/[/\\]/)) {
    const segment = raw.split(';', 1)[0]!.trim();
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return out;
}

/** Lower-case letters, digits, `-`, `_` between single slashes: nothing to decode or resolve. */
const PLAIN_PATH = /^\/(?:([a-z0-9_-]+)(?:\/[a-z0-9_-]+)*\/?)?(?:\?|$)/;

export function isAdministrativePath(url: string): boolean {
  // Every honest API call takes this path; the full canonicalisation costs ~10× more.
  const plain = PLAIN_PATH.exec(url);
  if (plain) return plain[1] !== undefined && ADMIN_SEGMENTS.has(plain[1]);
  const segments = canonicalSegments(url);
  if (segments === undefined) return true;
  const first = segments[0];
  return first !== undefined && ADMIN_SEGMENTS.has(first);
}
