import { describe, expect, it } from 'vitest';
import { askOf, ITEM_FEATURE_NAMES, itemFeatures } from './routing-item-features.ts';
import { parseOptions } from './routing-options.ts';

const feature = (text: string, name: (typeof ITEM_FEATURE_NAMES)[number]): number =>
  itemFeatures(text)[ITEM_FEATURE_NAMES.indexOf(name)] as number;

describe('parseOptions', () => {
  it('reads lettered lines in each form, keeping the stem apart', () => {
    for (const form of ['A. x', 'A) x', '(A) x', 'A: x'])
      expect(
        parseOptions(`Which one?\n${form}1\n${form.replace('A', 'B')}2\n${form.replace('A', 'C')}3`),
      ).toEqual({
        stem: 'Which one?',
        options: ['x1', 'x2', 'x3'],
      });
  });

  it('reads dash lists under "Options:" and inline "(A) … (B) …", dropping the header', () => {
    expect(parseOptions('Did it cause it?\nOptions:\n- Yes\n- No')).toEqual({
      stem: 'Did it cause it?',
      options: ['Yes', 'No'],
    });
    expect(parseOptions('Where is it? Answer Choices: (A) a shop (B) a park (C) home\nAnswer:')).toEqual({
      stem: 'Where is it?',
      options: ['a shop', 'a park', 'home'],
    });
  });

  it('finds no options in prose, in one lettered line, or in letters out of order', () => {
    expect(parseOptions('Write a poem about (a) cats.').options).toEqual([]);
    expect(parseOptions('Plan:\nA. start').options).toEqual([]);
    expect(parseOptions('x\nB. one\nC. two').options).toEqual([]);
  });
});

describe('itemFeatures', () => {
  it('scores alike options as more confusable than different ones', () => {
    const alike = 'When?\n(A) 12/25/1937\n(B) 12/24/1937\n(C) 12/26/1937';
    const apart = 'When?\n(A) a red apple\n(B) the year 1937\n(C) quantum chromodynamics';
    expect(feature(alike, 'optionMaxPairCos')).toBeGreaterThan(feature(apart, 'optionMaxPairCos'));
    expect(feature(alike, 'hasOptions')).toBe(1);
    expect(feature(alike, 'logOptionCount')).toBeCloseTo(Math.log(4));
  });

  it('is neutral without options and has one value per name', () => {
    const f = itemFeatures('Write a short poem about the sea.');
    expect(f).toHaveLength(ITEM_FEATURE_NAMES.length);
    expect(f.slice(0, 6)).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('counts rare words that WordPiece splits, and names mid-sentence', () => {
    expect(feature('the cat sat on the mat', 'splitWordShare')).toBe(0);
    expect(feature('the dihydroxyacetone phosphate isomerase', 'splitWordShare')).toBeGreaterThan(0.3);
    expect(feature('the dihydroxyacetone phosphate isomerase', 'maxPieces')).toBeGreaterThanOrEqual(3);
    expect(feature('Yesterday Alice met Bob in Paris.', 'midCapitalShare')).toBeCloseTo(3 / 6);
  });

  it('reads the question form from the ask only', () => {
    expect(askOf('A long story. Not relevant here. Which of these is not true?')).toBe(
      ' Which of these is not true?',
    );
    expect(feature('Which of the following is NOT a mammal?', 'askNegation')).toBe(1);
    expect(feature('What would happen if the moon vanished?', 'askHypothetical')).toBe(1);
    expect(feature('Why did Rome fall?', 'askPresupposition')).toBe(1);
    expect(feature('Is 7 larger than 5?', 'askComparison')).toBe(1);
    expect(feature('Name a mammal.', 'askNegation')).toBe(0);
  });
});
