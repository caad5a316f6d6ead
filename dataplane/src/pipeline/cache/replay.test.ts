import { describe, expect, it } from 'vitest';
import type { ChatCompletion } from '../../formats/openai/types.ts';
import { REPLAY_STEP_CHUNKS, replayChunks, replaySteps } from './replay.ts';

const META = { id: 'chatcmpl-gw', created: 1_700_000_000, model: 'client-model' };
const completion = (content: string): ChatCompletion => ({
  id: 'cached',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
});

describe('a cached answer replayed as a stream', () => {
  it('comes in bounded steps holding the same chunks in the same order', () => {
    const answer = completion(Array.from({ length: 1_000 }, (_, i) => `word${i}`).join(' '));
    const steps = [...replaySteps(answer, META)];
    // Role chunk, 1,000 words, finish chunk.
    expect(steps.flat()).toEqual([...replayChunks(answer, META)]);
    expect(steps.flat()).toHaveLength(1_002);
    expect(steps.every((s) => s.length > 0 && s.length <= REPLAY_STEP_CHUNKS)).toBe(true);
    expect(steps).toHaveLength(Math.ceil(1_002 / REPLAY_STEP_CHUNKS));
  });

  it('a short answer is one step', () => {
    const steps = [...replaySteps(completion('Hello there'), META, 8)];
    expect(steps.map((s) => s.length)).toEqual([4]);
    expect(steps[0]!.map((c) => c.choices[0]!.delta.content ?? '').join('')).toBe('Hello there');
  });
});
