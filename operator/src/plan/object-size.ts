/**
 * One object's share of the snapshot. The snapshot Secret holds 1 MiB (gzipped); without a cap
 * per object, one tenant listing a hundred thousand models, or one policy of megabytes, fills
 * it, and everyone else's new and changed objects wait behind it.
 */
import type { Manifest } from '@gantry/crds';

/**
 * The most one object may publish, in bytes of plain JSON (its manifest as published, plus a
 * ModelDeployment's credential). Realistic objects are far below: a tenant listing 1,000 models
 * is under 50 KB, an ApiKey a few hundred bytes. A quarter of the Secret's megabyte, though
 * plain JSON gzips to a fraction of that, so the biggest allowed object still leaves room.
 */
export const MAX_OBJECT_BYTES = 256 * 1024;

/**
 * The bytes an object publishes: its manifest's JSON and its credential's, in UTF-8. The
 * credential is measured as the snapshot stores it, a JSON string: measured raw, a credential of
 * control characters (6 bytes each escaped) published 5.4 times the cap.
 */
export function publishedBytes(manifest: Manifest, credential: string | undefined): number {
  return Buffer.byteLength(JSON.stringify(manifest)) + credentialBytes(credential);
}

const credentialBytes = (credential: string | undefined): number =>
  credential === undefined ? 0 : Buffer.byteLength(JSON.stringify(credential));

/**
 * Why an object is left out for its own size, or undefined if it is within the cap. The string
 * lengths are checked first: UTF-8 takes at most 3 bytes per UTF-16 unit (JSON's escapes are
 * ASCII), so only objects within a factor of 3 of the cap pay for counting their bytes.
 */
export function objectTooLarge(
  manifest: Manifest,
  credential: string | undefined,
  cap: number = MAX_OBJECT_BYTES,
): string | undefined {
  const units =
    JSON.stringify(manifest).length + (credential === undefined ? 0 : JSON.stringify(credential).length);
  if (units * 3 <= cap) return undefined;
  const bytes = publishedBytes(manifest, credential);
  if (bytes <= cap) return undefined;
  const what = credential === undefined ? 'its manifest' : 'its manifest and provider credential';
  return `${what} would take ${bytes} bytes of the snapshot (plain JSON), over the ${cap} bytes one object may take; it is not served (nor its previous version) until it is smaller`;
}
