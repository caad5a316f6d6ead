import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.ts';
import { imageParams, MAX_IMAGE_SIDE } from './images.ts';
import { imageUnits } from './pricing.ts';

const params = (size: string) => imageParams({ model: 'img', prompt: 'a fox', size }, 'images/generations');

describe('image sizes: only what some provider renders reaches the price', () => {
  it.each(['auto', '256x256', '1024x1024', '1792x1024', '1024x1536', '4096x2304', '4096x4096', '64x64'])(
    'takes %s',
    (size) => expect(params(size).size).toBe(size),
  );

  it.each(['99999x99999', '4097x1024', '1024x4097', '63x64', '0x0', '1024', '1024X1024', 'large'])(
    'refuses %s with a 400 naming size and the accepted forms',
    (size) => {
      let err: unknown;
      try {
        params(size);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(GatewayError);
      expect(err).toMatchObject({ status: 400, param: 'size' });
      expect((err as Error).message).toContain(`from 64 to ${MAX_IMAGE_SIDE} pixels`);
      expect((err as Error).message).toContain('1792x1024');
    },
  );

  it('the dearest size accepted is 16 units an image (32 at high quality), not thousands', () => {
    const largest = `${MAX_IMAGE_SIDE}x${MAX_IMAGE_SIDE}`;
    expect(imageUnits(params(largest).size, 'high', 1)).toBe(32);
  });
});
