import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../formats/openai/types.ts';
import { cacheFormatOf, skipReason, type CacheSkipDecision, type Endpoint, type HeaderBag } from './skip.ts';

const chat: Endpoint = { method: 'POST', path: '/v1/chat/completions' };
const req: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
const tools = [{ type: 'function' as const, function: { name: 'f' } }];

const run = 'run';
const skipBoth = (reason: CacheSkipDecision['reason']) => ({ lookup: false, store: false, reason });

describe('skipReason (SPEC.md cache rules 4 and 5)', () => {
  it.each<[string, ChatRequest, HeaderBag, boolean, Endpoint, CacheSkipDecision | typeof run]>([
    ['a plain chat request runs the cache', req, {}, true, chat, run],
    ['the Messages endpoint runs the cache', req, {}, true, { method: 'POST', path: '/v1/messages' }, run],
    [
      'x-gantry-cache: false skips the lookup but stores',
      req,
      { 'x-gantry-cache': 'false' },
      true,
      chat,
      { lookup: false, store: true, reason: 'header' },
    ],
    [
      'the header is case- and space-insensitive',
      req,
      { 'x-gantry-cache': ' FALSE ' },
      true,
      chat,
      { lookup: false, store: true, reason: 'header' },
    ],
    [
      'a repeated header counts',
      req,
      { 'x-gantry-cache': ['true', 'false'] },
      true,
      chat,
      { lookup: false, store: true, reason: 'header' },
    ],
    ['x-gantry-cache: true changes nothing', req, { 'x-gantry-cache': 'true' }, true, chat, run],
    ['tools skip lookup and store', { ...req, tools }, {}, true, chat, skipBoth('tools')],
    ['an empty tools list is still a tools field', { ...req, tools: [] }, {}, true, chat, skipBoth('tools')],
    [
      'legacy functions count as tools',
      { ...req, functions: [{ name: 'f' }] },
      {},
      true,
      chat,
      skipBoth('tools'),
    ],
    ['a tenant with the cache off skips both', req, {}, false, chat, skipBoth('tenant-disabled')],
    [
      'embeddings are never cached',
      req,
      {},
      true,
      { method: 'POST', path: '/v1/embeddings' },
      skipBoth('endpoint'),
    ],
    [
      'legacy completions are never cached',
      req,
      {},
      true,
      { method: 'POST', path: '/v1/completions' },
      skipBoth('endpoint'),
    ],
    [
      'GET is never cached',
      req,
      {},
      true,
      { method: 'GET', path: '/v1/chat/completions' },
      skipBoth('endpoint'),
    ],
    [
      'metadata.cache_bypass true forces a fresh answer, stored',
      { ...req, metadata: { cache_bypass: true } },
      {},
      true,
      chat,
      { lookup: false, store: true, reason: 'bypass' },
    ],
    [
      'the string "true" (OpenAI metadata values are strings) too',
      { ...req, metadata: { cache_bypass: 'true' } },
      {},
      true,
      chat,
      { lookup: false, store: true, reason: 'bypass' },
    ],
    [
      'cache_bypass false changes nothing',
      { ...req, metadata: { cache_bypass: 'false' } },
      {},
      true,
      chat,
      run,
    ],
    [
      'endpoint wins over everything',
      { ...req, tools },
      { 'x-gantry-cache': 'false' },
      false,
      { method: 'POST', path: '/v1/images/generations' },
      skipBoth('endpoint'),
    ],
    [
      'tenant off wins over tools and header',
      { ...req, tools },
      { 'x-gantry-cache': 'false' },
      false,
      chat,
      skipBoth('tenant-disabled'),
    ],
    [
      'tools win over the header: nothing is stored',
      { ...req, tools },
      { 'x-gantry-cache': 'false' },
      true,
      chat,
      skipBoth('tools'),
    ],
    [
      'the header wins over bypass (both store)',
      { ...req, metadata: { cache_bypass: true } },
      { 'x-gantry-cache': 'false' },
      true,
      chat,
      { lookup: false, store: true, reason: 'header' },
    ],
  ])('%s', (_name, r, headers, enabled, endpoint, expected) => {
    const decision = skipReason(r, headers, enabled, endpoint);
    expect(decision).toEqual(expected === run ? { lookup: true, store: true, reason: undefined } : expected);
  });
});

describe('cacheFormatOf', () => {
  it('names the format of the two cached endpoints, ignoring a query string and a trailing slash', () => {
    expect(cacheFormatOf({ method: 'post', path: '/v1/chat/completions?x=1' })).toBe('openai');
    expect(cacheFormatOf({ method: 'POST', path: '/v1/messages/' })).toBe('anthropic');
    expect(cacheFormatOf({ method: 'POST', path: '/v1/messages/count_tokens' })).toBeUndefined();
    expect(cacheFormatOf({ method: 'POST', path: '/v1/chat/completions/x' })).toBeUndefined();
    expect(cacheFormatOf({ method: 'POST', path: '/constructor' })).toBeUndefined();
  });
});
