import type {
  ApiKey,
  ApiKeySpec,
  CachePolicy,
  GuardrailPolicy,
  Manifest,
  ModelDeployment,
  ModelDeploymentSpec,
  ProviderKind,
  Tenant,
  TenantSpec,
} from '@gantry/crds';
import { describe, expect, it } from 'vitest';
import { compile, type CompileOptions, type CompileResult, type LocatedManifest } from './compile.ts';
import type { Snapshot } from './snapshot.ts';

const API = 'gantry.dev/v1alpha1' as const;
const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);

const md = (name: string, spec: Partial<ModelDeploymentSpec> = {}): ModelDeployment => ({
  apiVersion: API,
  kind: 'ModelDeployment',
  metadata: { name },
  spec: { model: 'gpt', provider: 'openai', upstreamModel: 'gpt-up', ...spec },
});
const tenant = (name: string, spec: Partial<TenantSpec> = {}): Tenant => ({
  apiVersion: API,
  kind: 'Tenant',
  metadata: { name },
  spec: { models: ['*'], ...spec },
});
const key = (name: string, spec: Partial<ApiKeySpec> = {}, namespace?: string): ApiKey => ({
  apiVersion: API,
  kind: 'ApiKey',
  metadata: namespace === undefined ? { name } : { name, namespace },
  spec: { tenantRef: { name: 'dev' }, keyHash: HASH_A, ...spec },
});
const guard = (name: string): GuardrailPolicy => ({
  apiVersion: API,
  kind: 'GuardrailPolicy',
  metadata: { name },
  spec: { secrets: { action: 'block' } },
});
const cachePolicy = (name: string): CachePolicy => ({
  apiVersion: API,
  kind: 'CachePolicy',
  metadata: { name },
  spec: { ttlSeconds: 60 },
});

/** Locate each manifest like the loader does: file, document number, kind/name. */
const located = (...manifests: Manifest[]): LocatedManifest[] =>
  manifests.map((manifest, i) => ({
    manifest,
    where: `gantry.yaml document ${i + 1} (${manifest.kind}/${manifest.metadata.name})`,
  }));

const baseOpts: CompileOptions = { env: { OPENAI_API_KEY: 'sk-real' }, version: 7, source: 'gantry.yaml' };

function ok(result: CompileResult): { snapshot: Snapshot; warnings: string[] } {
  if (!result.ok) throw new Error(`expected success, got: ${result.errors.join('; ')}`);
  return result;
}
function errors(result: CompileResult): string[] {
  if (result.ok) throw new Error('expected errors');
  expect(result).not.toHaveProperty('snapshot');
  return result.errors;
}

describe('deployment defaults', () => {
  it('fills every default and strips nothing it should keep', () => {
    const now = new Date('2025-01-02T03:04:05Z');
    const { snapshot, warnings } = ok(compile(located(md('d1')), { ...baseOpts, now }));
    expect(warnings).toEqual([]);
    expect(snapshot.version).toBe(7);
    expect(snapshot.source).toBe('gantry.yaml');
    expect(snapshot.loadedAt).toBe(now);
    const d = snapshot.models.get('gpt')!.deployments[0]!;
    expect(d).toEqual({
      name: 'd1',
      model: 'gpt',
      provider: 'openai',
      target: {
        provider: 'openai',
        baseUrl: 'https://api.openai.com/v1',
        upstreamModel: 'gpt-up',
        apiKey: undefined,
        apiVersion: undefined,
        prefill: false,
      },
      weight: 1,
      priority: 1,
      region: undefined,
      euResident: false,
      pricing: undefined,
      capabilities: new Set(['chat', 'streaming', 'tools', 'vision', 'json_mode']),
      contextWindow: undefined,
      timeouts: {
        totalMs: 60_000,
        connectMs: 5_000,
        headersMs: 60_000,
        firstTokenMs: 30_000,
        idleMs: 30_000,
      },
    });
  });

  it.each([
    ['openai', 'https://api.openai.com/v1'],
    ['anthropic', 'https://api.anthropic.com/v1'],
    ['gemini', 'https://generativelanguage.googleapis.com/v1beta'],
  ] as const)('default base URL for %s', (provider, url) => {
    const { snapshot } = ok(compile(located(md('d', { provider })), baseOpts));
    expect(snapshot.models.get('gpt')!.deployments[0]!.target.baseUrl).toBe(url);
  });

  it.each(['openai-compatible', 'azure-openai'] as const)('%s requires a base URL', (provider) => {
    const errs = errors(compile(located(md('d', { provider })), baseOpts));
    expect(errs).toEqual([
      `gantry.yaml document 1 (ModelDeployment/d): spec.baseUrl: required for provider ${provider}`,
    ]);
  });

  it('keeps explicit values and strips trailing slashes from the base URL', () => {
    const { snapshot } = ok(
      compile(
        located(
          md('d', {
            provider: 'azure-openai',
            baseUrl: 'https://x.openai.azure.com//',
            apiVersion: '2024-10-21',
            weight: 3,
            priority: 0,
            region: 'westeurope',
            euResident: true,
            pricing: { inputPerMillionTokens: 1, outputPerMillionTokens: 2 },
            capabilities: ['chat', 'embeddings'],
            contextWindow: 1000,
            timeoutMs: 9_000,
            connectTimeoutMs: 100,
            headersTimeoutMs: 2_000,
            firstTokenTimeoutMs: 700,
            streamIdleTimeoutMs: 3_000,
          }),
        ),
        baseOpts,
      ),
    );
    const d = snapshot.models.get('gpt')!.deployments[0]!;
    expect(d.target.baseUrl).toBe('https://x.openai.azure.com');
    expect(d.target.apiVersion).toBe('2024-10-21');
    expect(d.weight).toBe(3);
    expect(d.priority).toBe(0);
    expect(d.region).toBe('westeurope');
    expect(d.euResident).toBe(true);
    expect(d.pricing).toEqual({ inputPerMillionTokens: 1, outputPerMillionTokens: 2 });
    expect(d.capabilities).toEqual(new Set(['chat', 'embeddings']));
    expect(d.contextWindow).toBe(1000);
    expect(d.timeouts).toEqual({
      totalMs: 9_000,
      connectMs: 100,
      headersMs: 2_000,
      firstTokenMs: 700,
      idleMs: 3_000,
    });
  });

  it('headers timeout defaults to the total timeout', () => {
    const { snapshot } = ok(compile(located(md('d', { timeoutMs: 4_000 })), baseOpts));
    expect(snapshot.models.get('gpt')!.deployments[0]!.timeouts.headersMs).toBe(4_000);
  });

  it('first-token limit defaults to 30 s, or the whole attempt timeout when that is shorter', () => {
    const first = (spec: Partial<ModelDeploymentSpec>) =>
      ok(compile(located(md('d', spec)), baseOpts)).snapshot.models.get('gpt')!.deployments[0]!.timeouts
        .firstTokenMs;
    expect(first({})).toBe(30_000);
    expect(first({ timeoutMs: 4_000 })).toBe(4_000);
    expect(first({ timeoutMs: 4_000, firstTokenTimeoutMs: 9_000 })).toBe(9_000);
  });

  it('weight 0 and priority 0 are kept, not replaced by defaults', () => {
    const { snapshot } = ok(compile(located(md('d', { weight: 0, priority: 0 })), baseOpts));
    const d = snapshot.models.get('gpt')!.deployments[0]!;
    expect(d.weight).toBe(0);
    expect(d.priority).toBe(0);
  });
});

describe('prefill capability', () => {
  it('anthropic deployments accept prefill by default', () => {
    const { snapshot } = ok(compile(located(md('c', { provider: 'anthropic', model: 'claude' })), baseOpts));
    const d = snapshot.models.get('claude')!.deployments[0]!;
    expect(d.capabilities.has('prefill')).toBe(true);
    expect(d.target.prefill).toBe(true);
    expect(snapshot.models.get('claude')!.capabilities.has('prefill')).toBe(true);
  });

  it('anthropic keeps prefill alongside an explicit capability list', () => {
    const spec = { provider: 'anthropic', model: 'claude', capabilities: ['chat', 'documents'] } as const;
    const { snapshot } = ok(
      compile(located(md('c', { ...spec, capabilities: [...spec.capabilities] })), baseOpts),
    );
    expect(snapshot.models.get('claude')!.deployments[0]!.capabilities).toEqual(
      new Set(['chat', 'documents', 'prefill']),
    );
  });

  it.each(['openai', 'gemini'] as const)('%s has no prefill by default', (provider) => {
    const { snapshot } = ok(compile(located(md('d', { provider })), baseOpts));
    const d = snapshot.models.get('gpt')!.deployments[0]!;
    expect(d.capabilities.has('prefill')).toBe(false);
    expect(d.target.prefill).toBe(false);
  });

  it('an explicit prefill capability sets target.prefill for any provider', () => {
    const compat = { provider: 'openai-compatible' as const, baseUrl: 'http://vllm:8000/v1/' };
    const { snapshot } = ok(
      compile(located(md('d', { ...compat, capabilities: ['chat', 'prefill'] })), baseOpts),
    );
    const d = snapshot.models.get('gpt')!.deployments[0]!;
    expect(d.target.prefill).toBe(true);
    expect(d.target.baseUrl).toBe('http://vllm:8000/v1');
  });
});

describe('credentials', () => {
  it('reads the key from the named env variable', () => {
    const { snapshot } = ok(compile(located(md('d', { apiKeyEnv: 'OPENAI_API_KEY' })), baseOpts));
    expect(snapshot.models.get('gpt')!.deployments[0]!.target.apiKey).toBe('sk-real');
  });

  it.each([
    ['unset', {}],
    ['empty', { MY_KEY: '' }],
  ])('a %s env variable is an error naming the document, the field and the variable', (_, env) => {
    const errs = errors(compile(located(md('d', { apiKeyEnv: 'MY_KEY' })), { ...baseOpts, env }));
    expect(errs).toEqual([
      'gantry.yaml document 1 (ModelDeployment/d): spec.apiKeyEnv: environment variable MY_KEY is not set',
    ]);
  });

  it.each([
    ['set', { GANTRY_REDIS_PASSWORD: 'redis-pw' }, undefined],
    ['unset, even with the fake provider on', {}, () => 'http://127.0.0.1:9999/fake'],
  ])('a GANTRY_* variable (%s) is never a provider key: an error naming the field', (_, env, fakeBaseUrl) => {
    for (const name of ['GANTRY_REDIS_PASSWORD', 'gantry_admin_key']) {
      const errs = errors(
        compile(located(md('d', { apiKeyEnv: name, baseUrl: 'http://evil.example/v1' })), {
          ...baseOpts,
          env,
          fakeBaseUrl,
        }),
      );
      expect(errs).toEqual([
        `gantry.yaml document 1 (ModelDeployment/d): spec.apiKeyEnv: GANTRY_* variables are the gateway's own settings (Redis password, admin key, compaction secret), never a provider key (${name})`,
      ]);
    }
  });

  it('offline mode: a missing key switches the deployment to the fake provider, with a warning', () => {
    const asked: ProviderKind[] = [];
    const fakeBaseUrl = (p: ProviderKind) => {
      asked.push(p);
      return `http://127.0.0.1:9999/${p}/`;
    };
    const { snapshot, warnings } = ok(
      compile(
        located(
          md('real', { apiKeyEnv: 'OPENAI_API_KEY' }),
          md('fake', { provider: 'anthropic', model: 'claude', apiKeyEnv: 'ANTHROPIC_API_KEY' }),
        ),
        { ...baseOpts, fakeBaseUrl },
      ),
    );
    expect(asked).toEqual(['anthropic']);
    const real = snapshot.models.get('gpt')!.deployments[0]!;
    expect(real.target.baseUrl).toBe('https://api.openai.com/v1');
    expect(real.target.apiKey).toBe('sk-real');
    const fake = snapshot.models.get('claude')!.deployments[0]!;
    expect(fake.target.baseUrl).toBe('http://127.0.0.1:9999/anthropic');
    expect(fake.target.apiKey).toBe('fake-key');
    expect(warnings).toEqual([
      'gantry.yaml document 2 (ModelDeployment/fake): ANTHROPIC_API_KEY is not set; served by the built-in fake provider at http://127.0.0.1:9999/anthropic/',
    ]);
  });

  it('offline mode replaces even an explicit base URL', () => {
    const { snapshot } = ok(
      compile(
        located(md('d', { provider: 'openai-compatible', baseUrl: 'https://groq', apiKeyEnv: 'GROQ' })),
        {
          ...baseOpts,
          fakeBaseUrl: () => 'http://fake',
        },
      ),
    );
    expect(snapshot.models.get('gpt')!.deployments[0]!.target.baseUrl).toBe('http://fake');
  });

  it('no apiKeyEnv (e.g. a local Ollama): no key, no error', () => {
    const { snapshot, warnings } = ok(
      compile(
        located(md('d', { provider: 'openai-compatible', baseUrl: 'http://ollama:11434/v1' })),
        baseOpts,
      ),
    );
    expect(snapshot.models.get('gpt')!.deployments[0]!.target.apiKey).toBeUndefined();
    expect(warnings).toEqual([]);
  });

  it('credentialsSecretRef needs the operator', () => {
    const errs = errors(
      compile(located(md('d', { credentialsSecretRef: { name: 's', key: 'k' } })), baseOpts),
    );
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatch(/^gantry\.yaml document 1 \(ModelDeployment\/d\): spec\.credentialsSecretRef: /);
  });
});

describe('models', () => {
  it('groups deployments by model, sorted by priority then name', () => {
    const { snapshot } = ok(
      compile(
        located(
          md('zeta', { priority: 1 }),
          md('late', { priority: 3, provider: 'anthropic' }),
          md('alpha', { priority: 1 }),
          md('first', { priority: 0, provider: 'gemini' }),
          md('other', { model: 'other' }),
        ),
        baseOpts,
      ),
    );
    const route = snapshot.models.get('gpt')!;
    expect(route.deployments.map((d) => d.name)).toEqual(['first', 'alpha', 'zeta', 'late']);
    expect(route.ownedBy).toBe('gemini');
    expect(snapshot.models.get('other')!.deployments.map((d) => d.name)).toEqual(['other']);
    expect([...snapshot.models.keys()].sort()).toEqual(['gpt', 'other']);
  });

  it('a model can do what any of its deployments can', () => {
    const { snapshot } = ok(
      compile(
        located(
          md('a', { capabilities: ['chat', 'vision'] }),
          md('b', { capabilities: ['chat', 'documents'] }),
        ),
        baseOpts,
      ),
    );
    expect(snapshot.models.get('gpt')!.capabilities).toEqual(new Set(['chat', 'vision', 'documents']));
  });

  it('fallbacks are the union of the deployments’ lists, without duplicates', () => {
    const { snapshot } = ok(
      compile(
        located(
          md('a', { fallbacks: ['f1', 'f2'] }),
          md('b', { fallbacks: ['f2', 'f3'] }),
          md('x1', { model: 'f1' }),
          md('x2', { model: 'f2' }),
          md('x3', { model: 'f3' }),
        ),
        baseOpts,
      ),
    );
    expect(snapshot.models.get('gpt')!.fallbacks).toEqual(['f1', 'f2', 'f3']);
    expect(snapshot.models.get('f1')!.fallbacks).toEqual([]);
  });

  it('a fallback no deployment serves is an error naming the document and field', () => {
    const errs = errors(
      compile(located(md('x', { model: 'other' }), md('a', { fallbacks: ['ghost'] })), baseOpts),
    );
    expect(errs).toEqual([
      'gantry.yaml document 2 (ModelDeployment/a): spec.fallbacks: no ModelDeployment serves ghost',
    ]);
  });

  it('a model falling back to itself is an error naming the document and field', () => {
    const errs = errors(compile(located(md('a', { fallbacks: ['gpt'] })), baseOpts));
    expect(errs).toEqual([
      'gantry.yaml document 1 (ModelDeployment/a): spec.fallbacks: a model cannot fall back to itself',
    ]);
  });
});

describe('names', () => {
  it('the same kind/name twice is an error naming both places', () => {
    const errs = errors(compile(located(md('d'), md('d', { model: 'other' })), baseOpts));
    expect(errs).toEqual([
      'gantry.yaml document 2 (ModelDeployment/d): metadata.name: ModelDeployment/d is already defined at gantry.yaml document 1 (ModelDeployment/d)',
    ]);
  });

  it('the same name in different kinds is fine', () => {
    ok(compile(located(md('dev'), tenant('dev'), key('dev'), guard('dev'), cachePolicy('dev')), baseOpts));
  });
});

describe('tenants', () => {
  it('"*" allows every model (models undefined); a list becomes a set', () => {
    const { snapshot } = ok(
      compile(located(md('d'), tenant('all'), tenant('some', { models: ['gpt'] })), baseOpts),
    );
    expect(snapshot.tenants.get('all')!.models).toBeUndefined();
    expect(snapshot.tenants.get('some')!.models).toEqual(new Set(['gpt']));
  });

  it('"*" among other names still means all', () => {
    const { snapshot } = ok(compile(located(md('d'), tenant('t', { models: ['gpt', '*'] })), baseOpts));
    expect(snapshot.tenants.get('t')!.models).toBeUndefined();
  });

  it('a model no deployment serves yet is only a warning', () => {
    const { warnings } = ok(compile(located(md('d'), tenant('t', { models: ['gpt', 'future'] })), baseOpts));
    expect(warnings).toEqual([
      'gantry.yaml document 2 (Tenant/t): spec.models: no ModelDeployment serves future yet',
    ]);
  });

  it('policy references resolve to the policies’ specs', () => {
    const g = guard('strict');
    const c = cachePolicy('short');
    const { snapshot } = ok(
      compile(
        located(
          g,
          c,
          tenant('t', {
            guardrails: { policyRef: { name: 'strict' } },
            cache: { enabled: true, policyRef: { name: 'short' } },
          }),
          tenant('plain'),
        ),
        baseOpts,
      ),
    );
    expect(snapshot.tenants.get('t')!.guardrails).toBe(g.spec);
    expect(snapshot.tenants.get('t')!.cache).toBe(c.spec);
    expect(snapshot.tenants.get('plain')!.guardrails).toBeUndefined();
    expect(snapshot.tenants.get('plain')!.cache).toBeUndefined();
  });

  it('unknown policy references are errors naming the field', () => {
    const errs = errors(
      compile(
        located(
          tenant('t', {
            guardrails: { policyRef: { name: 'nope' } },
            cache: { enabled: true, policyRef: { name: 'gone' } },
          }),
        ),
        baseOpts,
      ),
    );
    expect(errs).toEqual([
      'gantry.yaml document 1 (Tenant/t): spec.guardrails.policyRef: GuardrailPolicy nope not found',
      'gantry.yaml document 1 (Tenant/t): spec.cache.policyRef: CachePolicy gone not found',
    ]);
  });
});

describe('api keys', () => {
  it('compiles a key record indexed by its hex hash', () => {
    const { snapshot } = ok(
      compile(
        located(
          tenant('dev'),
          key('k1', {}, 'team-a'),
          key('k2', { keyHash: HASH_B, models: ['gpt'], role: 'admin' }),
        ),
        baseOpts,
      ),
    );
    const k1 = snapshot.keys.get(HASH_A)!;
    expect(k1.id).toBe('team-a/k1');
    expect(k1.hash).toEqual(Buffer.from(HASH_A, 'hex'));
    expect(k1.hash).toHaveLength(32);
    expect(k1.tenant).toBe('dev');
    expect(k1.models).toBeUndefined();
    expect(k1.role).toBe('user');
    const k2 = snapshot.keys.get(HASH_B)!;
    expect(k2.id).toBe('default/k2');
    expect(k2.models).toEqual(new Set(['gpt']));
    expect(k2.role).toBe('admin');
  });

  it('the same key hash twice is an error naming the first key', () => {
    const errs = errors(compile(located(tenant('dev'), key('k1'), key('k2')), baseOpts));
    expect(errs).toEqual([
      'gantry.yaml document 3 (ApiKey/k2): spec.keyHash: the same key is already used by default/k1',
    ]);
  });

  it('a disabled key is left out and does not collide', () => {
    const { snapshot } = ok(
      compile(located(tenant('dev'), key('old', { disabled: true }), key('new')), baseOpts),
    );
    expect(snapshot.keys.size).toBe(1);
    expect(snapshot.keys.get(HASH_A)!.id).toBe('default/new');
  });

  it('an unknown tenantRef is an error', () => {
    const errs = errors(
      compile(located(tenant('dev'), key('k', { tenantRef: { name: 'ghost' } })), baseOpts),
    );
    expect(errs).toEqual(['gantry.yaml document 2 (ApiKey/k): spec.tenantRef: Tenant ghost not found']);
  });

  it('a key without keyHash is an error in standalone config', () => {
    const noHash = key('k');
    delete noHash.spec.keyHash;
    const errs = errors(compile(located(tenant('dev'), noHash), baseOpts));
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatch(/^gantry\.yaml document 2 \(ApiKey\/k\): spec\.keyHash: required/);
  });
});

describe('error collection', () => {
  it('reports every problem of the config at once', () => {
    const errs = errors(
      compile(
        located(
          md('a', { apiKeyEnv: 'MISSING' }),
          md('b', { fallbacks: ['ghost'] }),
          tenant('t', { guardrails: { policyRef: { name: 'nope' } } }),
          key('k', { tenantRef: { name: 'ghost' } }),
          md('b'),
        ),
        { ...baseOpts, env: {} },
      ),
    );
    expect(errs).toHaveLength(5);
    expect(errs.some((e) => e.includes('MISSING'))).toBe(true);
    expect(errs.some((e) => e.includes('ghost') && e.includes('spec.fallbacks'))).toBe(true);
    expect(errs.some((e) => e.includes('spec.guardrails.policyRef'))).toBe(true);
    expect(errs.some((e) => e.includes('spec.tenantRef'))).toBe(true);
    expect(errs.some((e) => e.includes('metadata.name'))).toBe(true);
  });
});

describe('retry policy and circuit breaker', () => {
  const WHERE = 'gantry.yaml document 1 (ModelDeployment/d)';
  const deployment = (spec: Partial<ModelDeploymentSpec>) =>
    ok(compile(located(md('d', spec)), baseOpts)).snapshot.models.get('gpt')!.deployments[0]!;

  it('absent: no retry policy (fail over at once) and the gateway breaker defaults', () => {
    const d = deployment({});
    expect(d.retry).toBeUndefined();
    expect(d.circuitBreaker).toBeUndefined();
  });

  it('retry: only attempts given, the rest filled with defaults', () => {
    expect(deployment({ retry: { attempts: 3 } }).retry).toEqual({
      attempts: 3,
      backoffMs: 100,
      maxBackoffMs: 2_000,
      retryOnStatus: new Set([429, 500, 502, 503, 504, 529]),
      retryOnConnectionError: true,
    });
  });

  it('retry: explicit values are kept', () => {
    const retry = {
      attempts: 2,
      backoffMs: 50,
      maxBackoffMs: 800,
      retryOnStatus: [502, 503],
      retryOnConnectionError: false,
    };
    expect(deployment({ retry }).retry).toEqual({ ...retry, retryOnStatus: new Set([502, 503]) });
  });

  it('retry: a small maxBackoffMs alone lowers the default backoff with it', () => {
    expect(deployment({ retry: { attempts: 2, maxBackoffMs: 30 } }).retry).toMatchObject({
      backoffMs: 30,
      maxBackoffMs: 30,
    });
  });

  it('retry: maxBackoffMs below backoffMs and non-transient statuses are named errors', () => {
    const errs = errors(
      compile(
        located(
          md('d', { retry: { attempts: 2, backoffMs: 500, maxBackoffMs: 100, retryOnStatus: [404, 503] } }),
        ),
        baseOpts,
      ),
    );
    expect(errs).toEqual([
      `${WHERE}: spec.retry.maxBackoffMs: 100 is below backoffMs 500`,
      `${WHERE}: spec.retry.retryOnStatus: 404 is not transient (only 429 and 5xx are retried)`,
    ]);
  });

  it('circuitBreaker: the manifest names map onto the breaker settings', () => {
    expect(
      deployment({ circuitBreaker: { failureThreshold: 5, openMs: 1_000, maxOpenMs: 4_000 } }).circuitBreaker,
    ).toEqual({ failureThreshold: 5, baseOpenMs: 1_000, maxOpenMs: 4_000 });
  });

  it('circuitBreaker: a threshold alone leaves the periods to the gateway', () => {
    expect(deployment({ circuitBreaker: { failureThreshold: 1 } }).circuitBreaker).toEqual({
      failureThreshold: 1,
    });
  });

  it('circuitBreaker: one period alone keeps the other consistent with it', () => {
    expect(deployment({ circuitBreaker: { maxOpenMs: 2_000 } }).circuitBreaker).toEqual({
      baseOpenMs: 2_000,
      maxOpenMs: 2_000,
    });
    expect(deployment({ circuitBreaker: { openMs: 20_000 } }).circuitBreaker).toEqual({
      baseOpenMs: 20_000,
      maxOpenMs: 20_000,
    });
  });

  it('circuitBreaker: maxOpenMs below openMs is a named error', () => {
    const errs = errors(
      compile(located(md('d', { circuitBreaker: { openMs: 5_000, maxOpenMs: 1_000 } })), baseOpts),
    );
    expect(errs).toEqual([`${WHERE}: spec.circuitBreaker.maxOpenMs: 1000 is below openMs 5000`]);
  });
});
