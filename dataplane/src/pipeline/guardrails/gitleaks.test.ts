/**
 * gitleaks' provider rules inside the secrets guard: a sample secret per rule, generated
 * from the rule's own regex (scripts/convert-gitleaks.py, seed 1), is found; published
 * example keys and random-looking identifiers are not.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GITLEAKS } from './gitleaks.ts';
import { detect } from './secrets.ts';

const data = (name: string): Array<{ rule?: string; text: string }> =>
  readFileSync(
    fileURLToPath(new URL(`../../../../test/data/guardrails/secrets/${name}`, import.meta.url)),
    'utf8',
  )
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { rule?: string; text: string });

const found = (text: string): string[] =>
  detect(text)
    .filter((f) => f.score >= 0.5)
    .map((f) => f.category);

describe('gitleaks rules', () => {
  it('were converted in full, with their source recorded', () => {
    expect(GITLEAKS.source.repo).toBe('gitleaks/gitleaks');
    expect(GITLEAKS.source.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(GITLEAKS.rules.length).toBeGreaterThanOrEqual(215);
  });

  const samples = data('samples.jsonl');
  it('have one sample per rule', () => {
    expect(new Set(samples.map((s) => s.rule))).toEqual(new Set(GITLEAKS.rules.map((r) => r.id)));
  });

  // The category is the rule's id, or the guard's own name where one of its rules knows the
  // format, or a twin rule's id (gitleaks has a few rules with one regex, bittrex's two).
  it.each(samples.map((s) => [s.rule, s.text] as const))('finds the %s sample', (_rule, text) => {
    expect(found(text).length).toBeGreaterThan(0);
  });

  it('names most findings after the rule that made the sample', () => {
    const exact = samples.filter((s) => found(s.text).includes(s.rule ?? '')).length;
    expect(exact / samples.length).toBeGreaterThan(0.8);
  });

  it.each([
    'aws_access_key_id = AKIAIOSFODNN7EXAMPLE',
    'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    'STRIPE_KEY=sk_test_4eC39HqLyjWDarjtT1zdp7dc',
    'GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
    'SLACK_BOT_TOKEN=xoxb-your-bot-token-here',
  ])('leaves the documented example %s alone', (text) => {
    expect(found(text)).toEqual([]);
  });

  it.each([
    'Idempotency-Key: 3f2b8c1e-9a7d-4e2f-b6a1-0c5d8e7f9a12',
    '"key": "8be21c06-1db6-4ce4-b11c-68b425699153", "value": "blue"',
    '"nextPageToken": "DUSNtTTzCMXmd_n7nuzXDgNp7XOqRsWd9CR8v87b"',
    'Please review commit 9fceb02d0ae598e95dc970b74767f19372d61af8 before the tag.',
    'image: registry.example.com/api@sha256:4d2f8f0c6a1e5b3d9c7a0e8f1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e',
  ])('does not take the identifier in %s for a secret', (text) => {
    expect(found(text)).toEqual([]);
  });

  it('still finds a UUID or hex digest under a name that says it is a secret', () => {
    expect(found('client_secret = "8be21c06-1db6-4ce4-b11c-68b425699153"')).toEqual(['GENERIC_CREDENTIAL']);
    expect(found('api_key: 9fceb02d0ae598e95dc970b74767f193')).toEqual(['GENERIC_CREDENTIAL']);
  });
});
