import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { compileValidators, formatAjvErrors, sharedValidators } from './index.ts';
import { ModelDeploymentSpec, type KindName } from './schemas.ts';

type Doc = Record<string, unknown> & { kind: KindName };

/** The design document's example manifests, fresh for every call (validation mutates). */
function examples(): Doc[] {
  const text = readFileSync(new URL('./fixtures/example.yaml', import.meta.url), 'utf8');
  return parseAllDocuments(text).map((doc) => doc.toJS() as Doc);
}

function example(kind: KindName): Doc {
  const doc = examples().find((d) => d.kind === kind);
  if (!doc) throw new Error(`no ${kind} in the fixture`);
  return doc;
}

const validators = compileValidators();

function check(doc: Doc): string[] {
  const validate = validators[doc.kind];
  return validate(doc) ? [] : formatAjvErrors(validate.errors);
}

const spec = (doc: Doc) => doc.spec as Record<string, unknown>;

describe('the DESIGN.md examples', () => {
  it('hold one manifest of each kind', () => {
    expect(examples().map((d) => d.kind)).toEqual([
      'ModelDeployment',
      'Tenant',
      'ApiKey',
      'GuardrailPolicy',
      'CachePolicy',
    ]);
  });

  it.each(examples().map((d) => [d.kind, d] as const))('%s is valid', (_kind, doc) => {
    expect(check(doc)).toEqual([]);
  });

  it('get the schema defaults filled in', () => {
    const doc = example('ModelDeployment');
    expect(check(doc)).toEqual([]);
    expect(spec(doc)).toMatchObject({ weight: 1, connectTimeoutMs: 5000, streamIdleTimeoutMs: 30000 });
    expect(spec(doc).timeoutMs).toBe(30000); // set in the example: not overwritten
  });
});

describe('broken manifests', () => {
  const cases: [string, KindName, (doc: Doc) => void, string[]][] = [
    ['a negative weight', 'ModelDeployment', (d) => (spec(d).weight = -1), ['/spec/weight: must be >= 0']],
    [
      'an unknown field',
      'ModelDeployment',
      (d) => (spec(d).wieght = 2),
      ['/spec: unknown property "wieght"'],
    ],
    [
      'an unknown provider',
      'ModelDeployment',
      (d) => (spec(d).provider = 'bedrock'),
      ['/spec/provider: must be one of: openai, openai-compatible, azure-openai, anthropic, gemini'],
    ],
    [
      'a repeated capability',
      'ModelDeployment',
      (d) => (spec(d).capabilities = ['chat', 'chat']),
      ['/spec/capabilities: must NOT have duplicate items (items ## 1 and 0 are identical)'],
    ],
    [
      'a budget past what micro-dollar counting holds exactly',
      'ApiKey',
      (d) => ((spec(d).budget as { limitUsd: number }).limitUsd = 1e10),
      ['/spec/budget/limitUsd: must be <= 1000000000'],
    ],
    ['a missing tenantRef', 'ApiKey', (d) => delete spec(d).tenantRef, ['/spec/tenantRef: is required']],
    [
      'a key hash that is not SHA-256 hex',
      'ApiKey',
      (d) => (spec(d).keyHash = 'abc'),
      ['/spec/keyHash: must match pattern "^[a-f0-9]{64}$"'],
    ],
    [
      'another API version',
      'Tenant',
      (d) => (d.apiVersion = 'gantry.dev/v1'),
      ['/apiVersion: must be "gantry.dev/v1alpha1"'],
    ],
    [
      'a reasoning effort out of range',
      'Tenant',
      (d) =>
        ((
          spec(d).routing as { levels: { complex: { reasoningEffort: string } } }
        ).levels.complex.reasoningEffort = 'max'),
      ['/spec/routing/levels/complex/reasoningEffort: must be one of: minimal, low, medium, high'],
    ],
    [
      'a threshold above 1',
      'GuardrailPolicy',
      (d) => ((spec(d).toxicity as { threshold: number }).threshold = 1.5),
      ['/spec/toxicity/threshold: must be <= 1'],
    ],
    [
      'a fractional TTL',
      'CachePolicy',
      (d) => (spec(d).ttlSeconds = 1.5),
      ['/spec/ttlSeconds: must be integer'],
    ],
    [
      'an invalid object name',
      'CachePolicy',
      (d) => ((d.metadata as { name: string }).name = 'Default_Policy'),
      ['/metadata/name: must match pattern "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"'],
    ],
    [
      'several problems at once',
      'CachePolicy',
      (d) => (d.spec = { alpha: 2, savingsShare: { pro: 150 }, extra: true }),
      [
        '/spec: unknown property "extra"',
        '/spec/alpha: must be <= 1',
        '/spec/savingsShare/pro: must be <= 100',
      ],
    ],
  ];

  it.each(cases)('%s', (_name, kind, breakIt, expected) => {
    const doc = example(kind);
    breakIt(doc);
    expect(check(doc)).toEqual(expected);
  });
});

describe('formatAjvErrors', () => {
  it('gives nothing for no errors', () => {
    expect(formatAjvErrors(null)).toEqual([]);
    expect(formatAjvErrors(undefined)).toEqual([]);
    expect(formatAjvErrors([])).toEqual([]);
  });

  it('reports a missing top-level field at the root', () => {
    const doc = example('Tenant');
    delete doc.spec;
    expect(check(doc)).toEqual(['/spec: is required']);
  });
});

describe('ModelDeployment retry and circuitBreaker ranges', () => {
  const withSpec = (extra: Record<string, unknown>): Doc => {
    const doc = example('ModelDeployment');
    Object.assign(spec(doc), extra);
    return doc;
  };

  it('accepts a full retry policy and breaker', () => {
    const doc = withSpec({
      retry: {
        attempts: 3,
        backoffMs: 100,
        maxBackoffMs: 2000,
        retryOnStatus: [429, 503],
        retryOnConnectionError: true,
      },
      circuitBreaker: { failureThreshold: 3, openMs: 5000, maxOpenMs: 10000 },
    });
    expect(check(doc)).toEqual([]);
  });

  it.each([
    [{ retry: {} }, 'attempts'],
    [{ retry: { attempts: 0 } }, 'attempts'],
    [{ retry: { attempts: 6 } }, 'attempts'],
    [{ retry: { attempts: 2, retryOnStatus: [200] } }, 'retryOnStatus'],
    [{ retry: { attempts: 2, retryOn: ['500'] } }, 'retryOn'],
    [{ circuitBreaker: { failureThreshold: 0 } }, 'failureThreshold'],
    [{ circuitBreaker: { openMs: 10 } }, 'openMs'],
    [{ circuitBreaker: { maxOpenMs: 600000 } }, 'maxOpenMs'],
  ])('rejects %j naming %s', (extra, field) => {
    const errs = check(withSpec(extra));
    expect(errs.length).toBeGreaterThan(0);
    expect(errs.join('\n')).toContain(field);
  });
});

describe('sharedValidators', () => {
  it('compiles once per process and checks like a private set', () => {
    const shared = sharedValidators();
    expect(sharedValidators()).toBe(shared);
    expect(shared).not.toBe(validators);
    const bad = example('ModelDeployment');
    Object.assign(spec(bad), { retry: { attempts: 0 } });
    expect(shared.ModelDeployment(bad)).toBe(false);
    expect(formatAjvErrors(shared.ModelDeployment.errors).join('\n')).toContain('attempts');
    expect(shared.ModelDeployment(example('ModelDeployment'))).toBe(true);
  });
});

describe('deployment timeouts', () => {
  // Past 2^31-1 ms Node fires a timer after 1 ms: such a timeout would fail every attempt at once.
  // Every value below it worked before the limit existed, so all of them stay valid (a day-long
  // cap turned older objects and snapshots from an older operator into InvalidSpec).
  it.each([
    'timeoutMs',
    'connectTimeoutMs',
    'headersTimeoutMs',
    'firstTokenTimeoutMs',
    'streamIdleTimeoutMs',
  ])('%s above 2^31-1 ms is rejected, naming the field; up to it is accepted', (field) => {
    const over = example('ModelDeployment');
    spec(over)[field] = 2 ** 31;
    expect(check(over)).toEqual([`/spec/${field}: must be <= 2147483647`]);
    for (const ok of [100_000_000, 2 ** 31 - 1]) {
      const fits = example('ModelDeployment');
      spec(fits)[field] = ok;
      expect(check(fits)).toEqual([]);
    }
  });
});

describe('ModelDeployment string bounds', () => {
  /** Paths of string nodes with no length bound and no fixed set of values. */
  const unbounded = (node: unknown, path: string): string[] => {
    if (Array.isArray(node)) return node.flatMap((n, i) => unbounded(n, `${path}/${i}`));
    if (typeof node !== 'object' || node === null) return [];
    const n = node as Record<string, unknown>;
    const here =
      n.type === 'string' && n.maxLength === undefined && n.enum === undefined && n.const === undefined
        ? [path]
        : [];
    return [...here, ...Object.entries(n).flatMap(([k, v]) => unbounded(v, `${path}/${k}`))];
  };

  it('bounds every string of the spec (an edit that may take something away carries all of it ahead)', () => {
    expect(unbounded(ModelDeploymentSpec, '')).toEqual([]);
  });

  it.each([
    ['region', { region: 'r'.repeat(65) }],
    ['apiVersion', { apiVersion: 'v'.repeat(65) }],
    ['fallbacks', { fallbacks: ['m'.repeat(201)] }],
    ['baseUrl', { baseUrl: `https://${'h'.repeat(2041)}` }],
    ['apiKeyEnv', { apiKeyEnv: 'K'.repeat(257) }],
  ])('rejects an over-long %s', (field, extra) => {
    const doc = example('ModelDeployment');
    Object.assign(spec(doc), extra);
    expect(check(doc).join('\n')).toMatch(new RegExp(`${field}.*(more than|NOT have more)`));
  });

  it('accepts the longest allowed', () => {
    const doc = example('ModelDeployment');
    Object.assign(spec(doc), { region: 'r'.repeat(64), fallbacks: ['m'.repeat(200)] });
    expect(check(doc)).toEqual([]);
  });
});
