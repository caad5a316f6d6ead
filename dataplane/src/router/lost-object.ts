/**
 * Whether an upstream 404 (or 403) is about an object the request names (a training file, a remix's
 * source video) or about the deployment itself (a misrouted base URL, Azure's "deployment does
 * not exist"). Only the first is the caller's 404 with the deployment held blameless; the
 * second is an outage the router must count and fail over from. Pure.
 */
import type { UpstreamError } from '../providers/types.ts';

/** An object a pinned request names, as the upstream knows it. */
export interface NamedObject {
  /** The caller's field naming it: the 404's `param`. */
  param: string;
  /** The upstream's id for it. */
  upstreamId: string;
  /** What providers' error codes call it (`file` in `file_not_found`, `video`). */
  kind: string;
  /** Replaces the upstream's message when that would name the upstream's id (videos). */
  message?: string | undefined;
}

const ID_CHAR = /[A-Za-z0-9_-]/;

/**
 * `id` appears in `text` as a whole id, not inside a longer one (`file-1` in `file-12`), and
 * not as a segment of a URL path: a framework's or proxy's 404 echoes the request's path
 * ("Route POST:/v1/videos/video_abc/remix not found", "Invalid URL (POST /v1/v1/...)"), which
 * names the id of a path-addressed object without blaming it.
 */
function mentions(text: string, id: string): boolean {
  if (id === '') return false;
  for (let at = text.indexOf(id); at !== -1; at = text.indexOf(id, at + 1)) {
    const before = at === 0 ? '' : text[at - 1]!;
    const after = text[at + id.length] ?? '';
    if (!ID_CHAR.test(before) && before !== '/' && !ID_CHAR.test(after)) return true;
  }
  return false;
}

/**
 * The named object an upstream 404 or 403 blames: its `param` is the object's field, its message
 * names the object's upstream id, or its code is the object's kind's `_not_found`. Undefined
 * for any other answer, which is then the deployment's failure like any other.
 */
export function lostObject(error: UpstreamError, objects: readonly NamedObject[]): NamedObject | undefined {
  // A 403 naming the object is the same answer from a provider that will not say whether an
  // object it refuses exists ("no permission to access the File x, or it may not exist").
  if ((error.status !== 404 && error.status !== 403) || objects.length === 0) return undefined;
  return (
    objects.find((o) => error.param !== undefined && o.param === error.param) ??
    objects.find((o) => mentions(error.message, o.upstreamId)) ??
    objects.find((o) => error.code !== undefined && error.code === `${o.kind}_not_found`)
  );
}
