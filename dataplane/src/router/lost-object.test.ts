import { describe, expect, it } from 'vitest';
import type { UpstreamError } from '../providers/types.ts';
import { lostObject, type NamedObject } from './lost-object.ts';

const training: NamedObject = { param: 'training_file', upstreamId: 'file-1', kind: 'file' };
const validation: NamedObject = { param: 'validation_file', upstreamId: 'file-12', kind: 'file' };
const objects = [training, validation];
const e404 = (message: string, extra: Partial<UpstreamError> = {}): UpstreamError => ({
  kind: 'not_found',
  status: 404,
  message,
  ...extra,
});

describe('lostObject', () => {
  it("names the object whose id the upstream's message names, as a whole id", () => {
    expect(lostObject(e404('No such File object: file-12', { param: 'id' }), objects)).toBe(validation);
    expect(lostObject(e404('No such File object: file-1'), objects)).toBe(training);
    expect(lostObject(e404("No file found with id 'file-123'."), objects)).toBeUndefined();
  });

  it("takes the upstream's param, then its code, when they name an object", () => {
    expect(lostObject(e404('gone', { param: 'validation_file' }), objects)).toBe(validation);
    const video: NamedObject = { param: 'video_id', upstreamId: 'v1', kind: 'video' };
    expect(lostObject(e404('gone', { code: 'video_not_found' }), [video])).toBe(video);
  });

  it("reads a 403 naming the object as a 404 does, and a 403 naming none as the deployment's", () => {
    const e403 = (message: string): UpstreamError => ({ kind: 'auth', status: 403, message });
    expect(lostObject(e403('You do not have permission to access the File file-12'), objects)).toBe(
      validation,
    );
    expect(
      lostObject(e403('Your API key does not have permission to use the specified resource.'), objects),
    ).toBeUndefined();
  });

  it('is nothing for a 404 about the deployment, or any other status', () => {
    const gone = 'The API deployment for this resource does not exist.';
    expect(lostObject(e404(gone, { code: 'DeploymentNotFound' }), objects)).toBeUndefined();
    expect(lostObject(e404('Invalid URL (POST /v1/v1/fine_tuning/jobs)'), objects)).toBeUndefined();
    // A 404 echoing the request's path names a path-addressed object's id without blaming it.
    const video: NamedObject = { param: 'video_id', upstreamId: 'video_abc', kind: 'video' };
    expect(lostObject(e404('Route POST:/v1/videos/video_abc/remix not found'), [video])).toBeUndefined();
    expect(lostObject(e404('Invalid URL (POST /v1/v1/videos/video_abc/remix)'), [video])).toBeUndefined();
    expect(lostObject(e404('Video video_abc not found'), [video])).toBe(video);
    expect(
      lostObject(e404('The model does not exist', { code: 'model_not_found' }), objects),
    ).toBeUndefined();
    expect(lostObject({ kind: 'bad_request', status: 400, message: 'file-1' }, objects)).toBeUndefined();
    expect(lostObject(e404('file-1'), [])).toBeUndefined();
  });
});
