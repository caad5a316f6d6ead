import { describe, expect, it } from 'vitest';
import { operandsSwapped } from './order-guard.ts';

describe('operandsSwapped', () => {
  it('declines questions whose operands around a relation word trade places', () => {
    expect(
      operandsSwapped('How do I convert Celsius to Fahrenheit?', 'How do I convert Fahrenheit to Celsius?'),
    ).toBe(true);
    expect(operandsSwapped('Why is TCP faster than UDP?', 'Why is UDP faster than TCP?')).toBe(true);
    expect(
      operandsSwapped('Flight time from London to New York?', 'Flight time from New York to London?'),
    ).toBe(true);
  });
  it('keeps reworded questions whose operands keep their order', () => {
    expect(
      operandsSwapped(
        'How do I convert Celsius to Fahrenheit?',
        'What is the way to turn Celsius into Fahrenheit?',
      ),
    ).toBe(false);
    expect(
      operandsSwapped('How do I delete a local branch in git?', 'In git, how can I delete a local branch?'),
    ).toBe(false);
    expect(operandsSwapped('What is the capital of France?', 'What is the capital of France?')).toBe(false);
  });
});
