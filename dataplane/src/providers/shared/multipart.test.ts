import { describe, expect, it } from 'vitest';
import { encodeMultipart } from './multipart.ts';

describe('encodeMultipart', () => {
  it('round-trips through the platform parser, bytes intact', async () => {
    const data = Buffer.from([0, 1, 2, 255, 13, 10, 45, 45]);
    const form = encodeMultipart({ model: 'm', prompt: 'a "quoted" prompt' }, [
      { field: 'image', filename: 'a.png', contentType: 'image/png', data },
    ]);
    const parsed = await new Response(new Uint8Array(form.body), {
      headers: { 'content-type': form.contentType },
    }).formData();
    expect(parsed.get('model')).toBe('m');
    expect(parsed.get('prompt')).toBe('a "quoted" prompt');
    const file = parsed.get('image') as File;
    expect(file.type).toBe('image/png');
    expect(Buffer.from(await file.arrayBuffer()).equals(data)).toBe(true);
  });
});
