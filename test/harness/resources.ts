/**
 * One stack for the owned-resource e2e suites: a deployment holding every family (token,
 * search prices set so charges show), a chat-only model, two keys of one tenant, one key of
 * another tenant, and the official client for each.
 */
import OpenAI from 'openai';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack, type StackOptions } from './stack.ts';

export const MODEL = 'store-model';
export const UPSTREAM_MODEL = 'gpt-4o-mini-up';
export const FILES_ONLY_MODEL = 'files-only-model';
export const PRICES = { inputPerMillionTokens: 1000, outputPerMillionTokens: 2000, perSearch: 0.002 };
export const BUDGET = { limitUsd: 100, period: 'monthly' as const };
export const OWNER_KEY_ID = 'default/owner';
export const MAX_UPLOAD_BYTES = 64 * 1024;

export interface ResourceStack {
  stack: Stack;
  owner: OpenAI;
  /** Another key of the owner's tenant. */
  sibling: OpenAI;
  /** A key of another tenant. */
  other: OpenAI;
  /** A key of the owner's tenant with a budget of a tenth of a cent, and one limited to 2 requests a minute. */
  poor: OpenAI;
  limited: OpenAI;
  /** A key of the owner's tenant with the largest budget a config may state ($1e9). */
  rich: OpenAI;
  keys: { owner: string; sibling: string; other: string };
  /** Upstream requests the fake has received so far. */
  upstreamCalls(): number;
  /** The owner key's budget spend, in micro-dollars. */
  spentMicros(): Promise<number>;
  close(): Promise<void>;
}

export async function startResourceStack(prefix: string, opts: StackOptions = {}): Promise<ResourceStack> {
  const keys = { owner: `sk-${prefix}-owner`, sibling: `sk-${prefix}-sibling`, other: `sk-${prefix}-other` };
  const stack = await startStack(
    ([url]) =>
      [
        deployment({ name: 'chat', model: 'chat-only', baseUrl: fakeBase(url!), capabilities: ['chat'] }),
        deployment({
          name: 'holder',
          model: MODEL,
          upstreamModel: UPSTREAM_MODEL,
          baseUrl: fakeBase(url!),
          capabilities: ['chat', 'files', 'batches', 'vector_stores', 'assistants', 'containers'],
          extra: { pricing: PRICES },
        }),
        // A second place for files only, chosen by the x-gantry-model header.
        deployment({
          name: 'files-only',
          model: FILES_ONLY_MODEL,
          baseUrl: fakeBase(url!),
          priority: 2,
          capabilities: ['files'],
        }),
        tenant('acme'),
        tenant('globex'),
        apiKey('owner', keys.owner, 'acme', { budget: BUDGET }),
        apiKey('sibling', keys.sibling, 'acme'),
        apiKey('other', keys.other, 'globex'),
        apiKey('poor', `sk-${prefix}-poor`, 'acme', { budget: { limitUsd: 0.001, period: 'monthly' } }),
        apiKey('limited', `sk-${prefix}-limited`, 'acme', { rateLimit: { requestsPerMinute: 2 } }),
        apiKey('rich', `sk-${prefix}-rich`, 'acme', { budget: { limitUsd: 1e9, period: 'monthly' } }),
      ].join(''),
    { maxUploadBytes: MAX_UPLOAD_BYTES, ...opts },
  );
  const client = (key: string) => new OpenAI({ baseURL: stack.baseURL, apiKey: key, maxRetries: 0 });
  return {
    stack,
    owner: client(keys.owner),
    sibling: client(keys.sibling),
    other: client(keys.other),
    poor: client(`sk-${prefix}-poor`),
    limited: client(`sk-${prefix}-limited`),
    rich: client(`sk-${prefix}-rich`),
    keys,
    upstreamCalls: () => stack.fakes[0]!.requests.length,
    async spentMicros() {
      const state = await stack.gateway.stores.budgets.state({ tenant: 'acme', keyId: OWNER_KEY_ID }, BUDGET);
      return Math.round(state.spentUsd * 1e6);
    },
    close: () => stack.close(),
  };
}

/** A client of the same stack's key on another gateway (another pod). */
export const clientOn = (baseURL: string, key: string): OpenAI =>
  new OpenAI({ baseURL, apiKey: key, maxRetries: 0 });

/** The HTTP status a client call ended with (200 when it succeeded). */
export const status = (p: Promise<unknown>): Promise<number | undefined> =>
  p.then(
    () => 200,
    (e: unknown) => (e as { status?: number }).status,
  );

/** The error a client call failed with, for its status and SPEC.md body. */
export async function failure(
  p: Promise<unknown>,
): Promise<{ status?: number; error: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    const err = e as { status?: number; error?: Record<string, unknown> };
    return { status: err.status, error: err.error ?? {} };
  }
  throw new Error('expected the call to fail');
}

/** X-Gantry-Cost of an answer, in micro-dollars. */
export const costMicros = (headers: Headers): number =>
  Math.round(Number(headers.get('x-gantry-cost')) * 1e6);
