import { describe, expect, it } from 'vitest';
import { MAX_MODEL_NAME_CHARS, modelNameError, oversizedModelName } from './model-name.ts';

const over = 'x'.repeat(MAX_MODEL_NAME_CHARS + 1);
const atLimit = 'x'.repeat(MAX_MODEL_NAME_CHARS);

describe('modelNameError', () => {
  it('takes names up to the limit and anything that is not a string (the schema judges those)', () => {
    expect(modelNameError('model', atLimit)).toBeUndefined();
    expect(modelNameError('model', 42)).toBeUndefined();
    expect(modelNameError('model', undefined)).toBeUndefined();
  });

  it('refuses a longer name with a 400 naming the param and echoing only a prefix', () => {
    const error = modelNameError('model', 'y'.repeat(1_000_000))!;
    expect(error.toBody()).toEqual({
      error: {
        type: 'invalid_request_error',
        code: 400,
        param: 'model',
        message: `model: must be at most 256 characters; got 1000000 starting "${'y'.repeat(32)}"`,
      },
    });
  });
});

describe('oversizedModelName', () => {
  const headers = {};
  it('finds the name in the body, the query or the model header', () => {
    expect(oversizedModelName({ body: { model: over }, query: {}, headers })?.param).toBe('model');
    expect(oversizedModelName({ body: { embedding_model: over }, query: {}, headers })?.param).toBe(
      'embedding_model',
    );
    expect(oversizedModelName({ body: undefined, query: { model: over }, headers })?.param).toBe('model');
    expect(oversizedModelName({ body: null, query: {}, headers: { 'x-gantry-model': over } })?.param).toBe(
      'x-gantry-model',
    );
  });

  it('passes names at the limit, bodies that are not objects, and other long fields', () => {
    expect(
      oversizedModelName({ body: { model: atLimit }, query: { model: atLimit }, headers }),
    ).toBeUndefined();
    expect(oversizedModelName({ body: [over], query: undefined, headers })).toBeUndefined();
    expect(oversizedModelName({ body: { prompt: over }, query: {}, headers })).toBeUndefined();
  });
});
