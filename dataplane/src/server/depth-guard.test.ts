import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors.ts';
import { checkJsonDepth } from './depth-guard.ts';

const nested = (n: number): unknown => JSON.parse('['.repeat(n) + ']'.repeat(n));

function refusal(body: unknown, limit: number): GatewayError {
  try {
    checkJsonDepth(body, limit);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected a refusal');
}

describe('checkJsonDepth', () => {
  it('lets a body at the limit through and refuses one level more, naming the limit', () => {
    // The body object itself is the first level.
    expect(() => checkJsonDepth({ x: nested(9) }, 10)).not.toThrow();
    const err = refusal({ x: nested(10) }, 10);
    expect(err.status).toBe(400);
    expect(err.type).toBe('invalid_request_error');
    expect(err.param).toBe('body');
    expect(err.message).toBe('body: JSON nesting depth exceeds 10');
  });

  it('holds tool-call arguments, JSON carried as text, to the same limit', () => {
    const call = (args: string) => ({ id: 'c', type: 'function', function: { name: 'f', arguments: args } });
    const body = (args: string) => ({
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', tool_calls: [call('{}'), call(args)] },
      ],
    });
    expect(() => checkJsonDepth(body('['.repeat(10) + ']'.repeat(10)), 10)).not.toThrow();
    const err = refusal(body('['.repeat(11) + ']'.repeat(11)), 10);
    expect(err.param).toBe('messages[1].tool_calls[1].function.arguments');
    expect(err.message).toBe('messages[1].tool_calls[1].function.arguments: JSON nesting depth exceeds 10');
  });

  it('does not trip over bodies of the wrong shape (schema validation reports those)', () => {
    for (const body of [
      undefined,
      null,
      'text',
      3,
      [],
      { messages: 'x' },
      { messages: [null, { tool_calls: [1, { function: 2 }] }] },
    ])
      expect(() => checkJsonDepth(body, 10)).not.toThrow();
  });
});
