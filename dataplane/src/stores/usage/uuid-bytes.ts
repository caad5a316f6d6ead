/**
 * Request ids are lowercase UUIDs (Gantry makes them with randomUUID): 16 bytes in a shared
 * array instead of a 36-character string each. Only the canonical lowercase form is packed,
 * so unpacking gives back the very same text; anything else is kept as the string it is.
 */
export const UUID_BYTES = 16;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Where each byte's two hex digits start in the 36-character form. */
const DIGIT_AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

const nibble = (code: number): number => (code <= 57 ? code - 48 : code - 87);

/** Writes `id` at `offset` and says whether it was a canonical lowercase UUID (else nothing is written). */
export function packUuid(id: string, into: Uint8Array, offset: number): boolean {
  if (id.length !== 36 || !UUID.test(id)) return false;
  for (let i = 0; i < UUID_BYTES; i++) {
    const at = DIGIT_AT[i]!;
    into[offset + i] = (nibble(id.charCodeAt(at)) << 4) | nibble(id.charCodeAt(at + 1));
  }
  return true;
}

export function unpackUuid(from: Uint8Array, offset: number): string {
  const h = (i: number): string => HEX[from[offset + i]!]!;
  return (
    h(0) +
    h(1) +
    h(2) +
    h(3) +
    '-' +
    h(4) +
    h(5) +
    '-' +
    h(6) +
    h(7) +
    '-' +
    h(8) +
    h(9) +
    '-' +
    h(10) +
    h(11) +
    h(12) +
    h(13) +
    h(14) +
    h(15)
  );
}
