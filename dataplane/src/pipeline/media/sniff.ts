/**
 * What a file is, from its first bytes. Clients often label uploads
 * `application/octet-stream` (the openai SDK does for a Buffer), so the declared type alone
 * cannot accept or refuse a file; the bytes decide, and the declared type is named when
 * they match nothing known.
 */

const ascii = (b: Buffer, at: number, s: string): boolean =>
  b.length >= at + s.length && b.toString('latin1', at, at + s.length) === s;

export function sniffMediaType(b: Buffer): string | undefined {
  if (b.length >= 8 && b.readUInt32BE(0) === 0x89504e47) return 'image/png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (ascii(b, 0, 'GIF8')) return 'image/gif';
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP')) return 'image/webp';
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WAVE')) return 'audio/wav';
  if (ascii(b, 0, 'fLaC')) return 'audio/flac';
  if (ascii(b, 0, 'OggS')) return 'audio/ogg';
  if (ascii(b, 0, 'ID3')) return 'audio/mpeg';
  // An MPEG audio frame sync without an ID3 tag.
  if (b.length >= 2 && b[0] === 0xff && (b[1]! & 0xe0) === 0xe0) return 'audio/mpeg';
  if (b.length >= 4 && b.readUInt32BE(0) === 0x1a45dfa3) return 'audio/webm';
  if (ascii(b, 4, 'ftyp')) return ascii(b, 8, 'M4A') ? 'audio/mp4' : 'video/mp4';
  if (ascii(b, 0, '%PDF')) return 'application/pdf';
  return undefined;
}

export const IMAGE_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/webp'];
/** The containers OpenAI's transcription endpoint takes (mp3, mp4, mpeg, mpga, m4a, wav, webm, flac, ogg). */
export const AUDIO_TYPES: readonly string[] = [
  'audio/mpeg',
  'audio/mp4',
  'video/mp4',
  'audio/wav',
  'audio/webm',
  'audio/flac',
  'audio/ogg',
];

/** The file's type when it is one of `allowed`; otherwise a reason naming what it is. */
export function checkMediaType(
  data: Buffer,
  declared: string,
  allowed: readonly string[],
): { ok: true; type: string } | { ok: false; reason: string } {
  const sniffed = sniffMediaType(data);
  if (sniffed && allowed.includes(sniffed)) return { ok: true, type: sniffed };
  const what = sniffed ?? (declared && declared !== 'application/octet-stream' ? declared : 'unrecognised');
  return { ok: false, reason: `file type ${what} is not accepted; send one of ${allowed.join(', ')}` };
}
