import { describe, expect, it, vi } from 'vitest';
import type { UpstreamError, UpstreamErrorKind } from '../providers/types.ts';
import { classifyError as geminiError } from '../providers/gemini/errors.ts';
import { blamedReference, blameRequest, tooLarge, type SentRequest } from './request-fault.ts';

const error = (status: number, message: string, extra: Partial<UpstreamError> = {}): UpstreamError => ({
  kind:
    status === 429 ? 'rate_limited' : status === 404 ? 'not_found' : status === 403 ? 'auth' : 'bad_request',
  status,
  message,
  ...extra,
});

const TOO_LARGE =
  'Request too large for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Requested 50000. ' +
  'The input or output tokens must be reduced.';
const LOAD =
  'Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000, ' +
  'Requested 2000. Please try again in 2s.';

describe('tooLarge', () => {
  it.each([
    [
      'OpenAI 429, requested above the limit',
      error(429, TOO_LARGE, { code: 'rate_limit_exceeded' }),
      30000,
      50000,
    ],
    [
      'Groq 413, same words',
      error(413, 'Request too large for model `x` on tokens per minute (TPM): Limit 6000, Requested 7591'),
      6000,
      7591,
    ],
    ['thousands separators', error(429, 'Limit 1,000,000, Requested 1,000,001'), 1_000_000, 1_000_001],
    [
      'a Used count does not matter when the request alone is over',
      error(429, 'Limit 100, Used 0, Requested 101'),
      100,
      101,
    ],
  ])('%s → too large', (_name, e, limit, requested) => {
    expect(tooLarge(e)).toEqual({ limit, requested });
  });

  it("Anthropic's 413 request_too_large is too large without numbers", () => {
    expect(
      tooLarge(
        error(413, 'Request exceeds the maximum allowed number of bytes.', { code: 'request_too_large' }),
      ),
    ).toEqual({});
  });

  it.each([
    ['a load 429 whose request fits the limit', error(429, LOAD)],
    ['requested equal to the limit (fits an empty window)', error(429, 'Limit 100, Requested 100')],
    ['a 429 without numbers', error(429, 'Rate limit reached for requests')],
    [
      "Anthropic's organisation limit (no request size)",
      error(
        429,
        'This request would exceed the rate limit for your organization of 20,000 input tokens per minute.',
      ),
    ],
    ['Gemini RESOURCE_EXHAUSTED', error(429, 'Resource has been exhausted (e.g. check quota).')],
    ['a 413 from a proxy (no code, no numbers)', error(413, '<html>413 Request Entity Too Large</html>')],
    ['the numbers on another status', error(400, 'Limit 1, Requested 2')],
    ['a 500 with the words', error(500, TOO_LARGE)],
  ])('%s → not', (_name, e) => {
    expect(tooLarge(e)).toBeUndefined();
  });
});

const sent = (body: unknown, upstreamModel = 'gpt-4o'): SentRequest => ({
  body: body === undefined ? undefined : JSON.stringify(body),
  upstreamModel,
});
const geminiBody = {
  contents: [
    {
      role: 'user',
      parts: [
        { text: 'describe' },
        {
          fileData: {
            mimeType: 'image/png',
            fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc-123xyz',
          },
        },
      ],
    },
  ],
};
const anthropicBody = {
  model: 'claude-x',
  container: 'container_011CXyz',
  messages: [{ role: 'user', content: 'hi' }],
};
const openaiBody = {
  model: 'gpt-4o',
  messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-Abc123' } }] }],
};

describe('blamedReference: the caller’s reference', () => {
  it.each([
    [
      'OpenAI param',
      error(404, 'No such File object: file-Abc123', { param: 'messages[0].content[0].file.file_id' }),
      sent(openaiBody),
      { param: 'messages[0].content[0].file.file_id' },
    ],
    [
      'a param on a 403',
      error(403, 'not yours', { param: 'file_id' }),
      sent(undefined),
      { param: 'file_id' },
    ],
    [
      "Anthropic's field prefix, a path",
      error(404, 'messages.0.content.1.source: File not found: file_011x'),
      sent(undefined),
      { param: 'messages.0.content.1.source' },
    ],
    [
      "Anthropic's field prefix, a top-level reference field",
      error(404, 'container: not found'),
      sent(undefined),
      { param: 'container' },
    ],
    [
      'a container id the request sent',
      error(404, 'Container container_011CXyz not found', { code: 'not_found_error' }),
      sent(anthropicBody, 'claude-x'),
      { param: 'container', id: 'container_011CXyz' },
    ],
    [
      'a Gemini file the key may not read (403)',
      error(403, 'You do not have permission to access the File abc-123xyz or it may not exist.'),
      sent(geminiBody, 'gemini-2.0-flash'),
      { param: 'contents[0].parts[1].fileData.fileUri', id: 'abc-123xyz' },
    ],
    [
      'a Gemini file named with its collection',
      error(404, 'File files/abc-123xyz was not found.'),
      sent(geminiBody),
      { param: 'contents[0].parts[1].fileData.fileUri', id: 'files/abc-123xyz' },
    ],
    [
      'an OpenAI file id in the message',
      error(404, 'No such File object: file-Abc123'),
      sent(openaiBody),
      { param: 'messages[0].content[0].file.file_id', id: 'file-Abc123' },
    ],
    [
      'a documented object code, nothing else',
      error(404, 'gone', { code: 'file_not_found' }),
      sent(undefined),
      {},
    ],
    ['a container code', error(404, 'gone', { code: 'container_not_found' }), sent(undefined), {}],
    [
      'a vector store id in a list',
      error(404, "Vector store with id 'vs_bogus123' not found."),
      sent({
        model: 'gpt-4o',
        input: 'x',
        tools: [{ type: 'file_search', vector_store_ids: ['vs_ok1', 'vs_bogus123'] }],
      }),
      { param: 'tools[0].vector_store_ids[1]', id: 'vs_bogus123' },
    ],
    [
      'a file id in a list',
      error(404, 'No file with id abcdef'),
      sent({ model: 'gpt-4o', attachments: { file_ids: ['abcdef'] } }),
      { param: 'attachments.file_ids[0]', id: 'abcdef' },
    ],
    [
      'an Anthropic container given as {id}',
      error(404, 'Container cntr_9 not found'),
      sent({ model: 'claude-x', container: { id: 'cntr_9', skills: [] } }, 'claude-x'),
      { param: 'container.id', id: 'cntr_9' },
    ],
    [
      'an Anthropic skill',
      error(404, 'Skill skill_01abc not found'),
      sent(
        { model: 'claude-x', container: { skills: [{ type: 'custom', skill_id: 'skill_01abc' }] } },
        'claude-x',
      ),
      { param: 'container.skills[0].skill_id', id: 'skill_01abc' },
    ],
    [
      "an MCP server's URL",
      error(403, 'MCP server https://mcp.example/sse refused the connection'),
      sent(
        { model: 'claude-x', mcp_servers: [{ type: 'url', url: 'https://mcp.example/sse', name: 'm' }] },
        'claude-x',
      ),
      { param: 'mcp_servers[0].url', id: 'https://mcp.example/sse' },
    ],
  ])('%s', (_name, e, s, expected) => {
    expect(blamedReference(e, s)).toEqual(expected);
  });

  // A caller chooses its fake id's shape: all letters, or short, must be read as well as `file-1`.
  const geminiFile = (name: string) => ({
    contents: [
      {
        role: 'user',
        parts: [
          { text: 'x' },
          {
            fileData: {
              mimeType: 'image/jpeg',
              fileUri: `https://generativelanguage.googleapis.com/v1beta/files/${name}`,
            },
          },
        ],
      },
    ],
  });
  it.each(['abcdefgh', 'ab1', 'zzzzzzzzzz', 'abc', 'gemini-2.0-flash'])(
    'a Gemini file named %s (403, any shape, even the model name)',
    (name) => {
      const e = error(403, `You do not have permission to access the File ${name} or it may not exist.`);
      expect(blamedReference(e, sent(geminiFile(name), 'gemini-2.0-flash'))).toEqual({
        param: 'contents[0].parts[1].fileData.fileUri',
        id: name,
      });
    },
  );

  it("Gemini's file wording is the caller's even when the body cannot be read", () => {
    const e = error(403, 'You do not have permission to access the File qq or it may not exist.');
    expect(blamedReference(e, { body: undefined, upstreamModel: 'g' })).toEqual({ id: 'qq' });
  });

  const ANTHROPIC = 'https://api.anthropic.com/v1/messages';
  const fileBody = (id: string) => ({ model: 'claude-x', container: id });
  it.each([
    ['with a space', 'my file', 'File not found: my file'],
    ['case-folded by the upstream', 'ABCdefgh', 'File not found: abcdefgh'],
    ['named as the upstream resource path', 'abcdefgh', 'File not found: files/abcdefgh'],
    ['padded', ' abcdefgh ', 'Container abcdefgh not found'],
  ])('a container id %s', (_name, id, message) => {
    const e = error(404, message);
    expect(blamedReference(e, { ...sent(fileBody(id), 'claude-x'), url: ANTHROPIC })).toEqual({
      param: 'container',
      id: id.trim(),
    });
  });

  it.each(['abcdefgh', 'abc', 'Found', 'claude-x', 'messages'])(
    'an Anthropic file_id %s named by the 404',
    (id) => {
      const e = error(404, `File not found: ${id}`, { code: 'not_found_error' });
      const body = {
        model: 'claude-x',
        messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: id } }] }],
      };
      // The model's name and the route's words are the caller's too when the route does not hold them.
      const s = { ...sent(body, 'claude-x'), url: 'https://api.anthropic.com/v1/messages' };
      expect(blamedReference(e, s)).toEqual({
        param: 'messages[0].content[0].source.file_id',
        id,
      });
    },
  );
});

describe('blamedReference: the deployment’s fault', () => {
  it.each([
    [
      'unknown model, OpenAI',
      error(404, 'The model `gpt-4o` does not exist or you do not have access to it.', {
        code: 'model_not_found',
      }),
      sent(openaiBody),
    ],
    [
      'unknown model named, no code',
      error(404, 'The model gpt-4o-2099 does not exist', {}),
      sent({ model: 'gpt-4o-2099' }, 'gpt-4o-2099'),
    ],
    ['param model', error(404, 'no such model', { param: 'model' }), sent(openaiBody)],
    ["Anthropic's model prefix", error(404, 'model: claude-nope'), sent(anthropicBody, 'claude-nope')],
    [
      "Azure's missing deployment",
      error(404, 'The API deployment for this resource does not exist.', { code: 'DeploymentNotFound' }),
      sent(openaiBody),
    ],
    [
      'a deployment code beats a param',
      error(404, 'x', { code: 'DeploymentNotFound', param: 'file_id' }),
      sent(openaiBody),
    ],
    ['a misrouted base URL', error(404, 'Invalid URL (POST /v1/v1/chat/completions)'), sent(openaiBody)],
    [
      'a route echo naming a path id',
      error(404, 'Route POST:/v1/videos/file-Abc123/remix not found'),
      sent(openaiBody),
    ],
    [
      'a route echo naming a path id, the route known',
      error(404, 'Route POST:/v1/videos/file-Abc123/remix not found'),
      { ...sent(openaiBody), url: 'http://u/v1/videos/file-Abc123/remix' },
    ],
    [
      'a misrouted base URL echoing a route word the caller also sent',
      error(404, 'Invalid URL (POST /v1/v1/chat/completions)'),
      { ...sent({ model: 'm', file_id: 'completions' }), url: 'http://u/v1/v1/chat/completions' },
    ],
    [
      'a bare Not Found',
      error(404, 'Not Found'),
      sent({ model: 'm', messages: [{ role: 'user', content: 'Not Found' }] }),
    ],
    ["a proxy's error prefix", error(404, 'error: not found'), sent(undefined)],
    ["a proxy's capitalised prefix", error(404, 'Error: upstream gone'), sent(undefined)],
    [
      'Anthropic permission_error (bad key)',
      error(403, 'Your API key does not have permission to use the specified resource.', {
        code: 'permission_error',
      }),
      sent(anthropicBody, 'claude-x'),
    ],
    ['Gemini caller lacks permission', error(403, 'The caller does not have permission'), sent(geminiBody)],
    [
      'OpenAI region block',
      error(403, 'Country, region, or territory not supported', {
        code: 'unsupported_country_region_territory',
      }),
      sent(openaiBody),
    ],
    ['an id inside a longer one', error(404, 'No such File object: file-Abc1234'), sent(openaiBody)],
    [
      'prose in a reference-less body',
      error(404, 'user-12345 not found'),
      sent({ model: 'm', user: 'user-12345' }),
    ],
    ['a value too short to be read', error(404, 'ab not found'), sent({ model: 'm', file_id: 'ab' })],
    [
      'a body that is not JSON',
      error(404, 'file-Abc123 missing'),
      { body: 'file_id=file-Abc123', upstreamModel: 'm' },
    ],
    [
      'a binary body',
      error(404, 'file-Abc123 missing'),
      { body: new Uint8Array([1, 2]), upstreamModel: 'm' },
    ],
    ['an unknown _not_found code', error(404, 'x', { code: 'route_not_found' }), sent(undefined)],
    ['a one-word prefix that is no reference field', error(404, 'metadata: not found'), sent(undefined)],
    [
      'a reference field holding the deployment model',
      error(404, 'ft-model-0123 not found'),
      sent({ model_id: 'ft-model-0123' }, 'ft-model-0123'),
    ],
    ['a nested model param', error(404, 'gone', { param: 'model.name' }), sent(undefined)],
    [
      'a string in a list that is no reference list',
      error(404, 'stop_seq not found'),
      sent({ model: 'm', stop: ['stop_seq'], input: ['stop_seq'] }),
    ],
  ])('%s', (_name, e, s) => {
    expect(blamedReference(e, s)).toBeUndefined();
  });

  const GEMINI_URL = 'https://generativelanguage.googleapis.com/v1beta/models/gemini-1.5-pro-typo';
  it.each([`${GEMINI_URL}:generateContent`, `${GEMINI_URL}:streamGenerateContent?alt=sse`, undefined])(
    "Gemini's unknown model, though the caller sent a URL ending in models/<it> (%s)",
    (url) => {
      const e = error(
        404,
        'models/gemini-1.5-pro-typo is not found for API version v1beta, or is not supported for generateContent.',
      );
      const body = {
        contents: [
          {
            role: 'user',
            parts: [
              {
                fileData: {
                  mimeType: 'image/png',
                  fileUri: 'https://example.com/models/gemini-1.5-pro-typo',
                },
              },
            ],
          },
        ],
      };
      expect(blamedReference(e, { ...sent(body, 'gemini-1.5-pro-typo'), url })).toBeUndefined();
    },
  );

  it.each([
    ['SERVICE_DISABLED', 403, 'PERMISSION_DENIED'],
    ['API_KEY_INVALID', 403, 'PERMISSION_DENIED'],
  ])("Gemini's %s reason, though the message names a word the caller sent", (reason, status, rpc) => {
    const e = geminiError(
      status,
      {},
      JSON.stringify({
        error: {
          code: status,
          message: 'Generative Language API has not been used in project 1234 before or it is disabled.',
          status: rpc,
          details: [
            { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com' },
          ],
        },
      }),
    );
    const body = { contents: [{ parts: [{ fileData: { fileUri: 'https://x.example/files/project' } }] }] };
    expect(blamedReference(e, sent(body, 'gemini-2.0-flash'))).toBeUndefined();
  });

  it.each([400, 401, 409, 410, 429, 500])('only 403 and 404 are read (%d is not)', (status) => {
    expect(
      blamedReference(
        error(status, 'No such File object: file-Abc123', { param: 'file_id' }),
        sent(openaiBody),
      ),
    ).toBeUndefined();
  });
});

describe('bounded work on a large message', () => {
  const huge = JSON.stringify({ messages: [{ role: 'user', content: 'a'.repeat(1_000_000) }] });
  const words = Array.from({ length: 8000 }, (_, i) => `w${i}_x`).join(' ');

  it('does not parse a large body that names no reference field, whatever the message holds', () => {
    const parse = vi.spyOn(JSON, 'parse');
    try {
      blameRequest(error(404, words), { body: huge, upstreamModel: 'm' });
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
  });

  it('reads only the start of a message', () => {
    const late = `${'x'.repeat(2000)} Limit 100, Requested 200`;
    expect(tooLarge(error(429, late))).toBeUndefined();
    const lateFile = `${'x '.repeat(1000)}No such File object: file-Abc123`;
    expect(blamedReference(error(404, lateFile), sent(openaiBody))).toBeUndefined();
  });

  it('reads Limit and Requested only close together', () => {
    expect(tooLarge(error(429, `Limit 100, ${'y'.repeat(100)} Requested 200`))).toBeUndefined();
    expect(tooLarge(error(429, 'Limit 100 '.repeat(8000)))).toBeUndefined();
  });
});

describe('blameRequest', () => {
  const kinds = (e: UpstreamError, s: SentRequest = sent(openaiBody)): UpstreamErrorKind =>
    blameRequest(e, s).kind;

  it('turns a request too large into too_large, naming the limit, without the upstream organisation or a wait', () => {
    const out = blameRequest(
      error(429, TOO_LARGE, { retryAfterMs: 30_000, code: 'rate_limit_exceeded' }),
      sent(openaiBody),
    );
    expect(out.kind).toBe('too_large');
    expect(out.status).toBe(429);
    expect(out.retryAfterMs).toBeUndefined();
    expect(out.message).toContain('50000');
    expect(out.message).toContain('30000 tokens per minute');
    expect(out.message).not.toContain('org-abc');
  });

  it("keeps Anthropic's own words for its byte limit", () => {
    const out = blameRequest(
      error(413, 'Request exceeds the maximum allowed number of bytes.', {
        kind: 'context_length',
        code: 'request_too_large',
      }),
      sent(anthropicBody),
    );
    expect(out).toMatchObject({ kind: 'too_large', status: 413 });
    expect(out.message).toContain('maximum allowed number of bytes');
  });

  it('turns a 403/404 blaming a reference into bad_reference with the field', () => {
    const out = blameRequest(
      error(403, 'You do not have permission to access the File abc-123xyz or it may not exist.'),
      sent(geminiBody),
    );
    expect(out).toMatchObject({
      kind: 'bad_reference',
      status: 403,
      param: 'contents[0].parts[1].fileData.fileUri',
    });
  });

  it('leaves everything else as it was', () => {
    const load = error(429, LOAD, { retryAfterMs: 2000 });
    expect(blameRequest(load, sent(openaiBody))).toBe(load);
    expect(kinds(error(404, 'Invalid URL (POST /v1/v1/chat/completions)'))).toBe('not_found');
    expect(kinds(error(403, 'The caller does not have permission'))).toBe('auth');
    expect(kinds(error(500, 'boom', { kind: 'server' }))).toBe('server');
    expect(kinds(error(400, 'bad', { kind: 'bad_request' }))).toBe('bad_request');
  });
});

// A deployment's own 403/404 must not read as the caller's because a value the caller chose, under
// a key that names no upstream object, happens to be a word of it.
describe('blamedReference: only known reference fields are read', () => {
  const ANTHROPIC = 'https://api.anthropic.com/v1/messages';
  it.each(['api', 'key', 'resource', 'permission'])(
    "Anthropic's key without permission, the caller's `user` (metadata.user_id) being %s",
    (user) => {
      const e = error(403, 'Your API key does not have permission to use the specified resource.', {
        code: 'permission_error',
      });
      const body = {
        model: 'claude-x',
        metadata: { user_id: user },
        messages: [{ role: 'user', content: 'hi' }],
      };
      expect(blamedReference(e, { ...sent(body, 'claude-x'), url: ANTHROPIC })).toBeUndefined();
    },
  );

  it("Azure's wrong base URL, a metadata value being 'resource'", () => {
    const e = error(404, 'Resource not found', { code: '404' });
    const body = { messages: [{ role: 'user', content: 'hi' }], metadata: { session_id: 'resource' } };
    const url = 'https://r.openai.azure.com/openai/deployments/gpt4o/chat/completions?api-version=2099-01-01';
    expect(blamedReference(e, { ...sent(body), url })).toBeUndefined();
  });

  it("vLLM's unknown model, the caller echoing the model in a tool_call_id or a file_id", () => {
    const e = error(404, 'The model `llama-3.1-8b` does not exist.', { code: '404' });
    const url = 'http://vllm:8000/v1/chat/completions';
    const tool = {
      model: 'llama-3.1-8b',
      messages: [{ role: 'tool', tool_call_id: 'llama-3.1-8b', content: 'x' }],
    };
    const file = {
      model: 'llama-3.1-8b',
      messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'llama-3.1-8b' } }] }],
    };
    expect(blamedReference(e, { ...sent(tool, 'llama-3.1-8b'), url })).toBeUndefined();
    expect(blamedReference(e, { ...sent(file, 'llama-3.1-8b'), url })).toBeUndefined();
  });

  it('an image URL ending in a word of the message', () => {
    const e = error(404, 'Resource not found');
    const body = {
      model: 'gpt-4o',
      messages: [
        {
          role: 'user',
          content: [{ type: 'image_url', image_url: { url: 'https://img.example/resource' } }],
        },
      ],
    };
    expect(blamedReference(e, sent(body))).toBeUndefined();
  });

  it.each([
    ['CONSUMER_SUSPENDED', "Permission denied: Consumer 'api_key:AIzaXX' has been suspended.", 'suspended'],
    [
      'API_KEY_SERVICE_BLOCKED',
      'Requests to this API generativelanguage.googleapis.com method GenerateContent are blocked.',
      'blocked',
    ],
    ['API_KEY_HTTP_REFERRER_BLOCKED', 'Requests from referer <empty> are blocked.', 'blocked'],
    ['BILLING_DISABLED', 'This API method requires billing to be enabled.', 'billing'],
    ['ACCESS_TOKEN_SCOPE_INSUFFICIENT', 'Request had insufficient authentication scopes.', 'scopes'],
    ['IAM_PERMISSION_DENIED', "Permission 'aiplatform.endpoints.predict' denied on resource.", 'resource'],
    ['USER_PROJECT_DENIED', 'Caller does not have required permission to use project p1.', 'project'],
  ])(
    "Gemini's %s reason, though a file the caller sent ends in a word of the message",
    (reason, message, word) => {
      const e = geminiError(
        403,
        {},
        JSON.stringify({
          error: {
            code: 403,
            message,
            status: 'PERMISSION_DENIED',
            details: [
              { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'googleapis.com' },
            ],
          },
        }),
      );
      const body = {
        contents: [
          {
            role: 'user',
            parts: [{ fileData: { mimeType: 'image/jpeg', fileUri: `https://img.example/${word}` } }],
          },
        ],
      };
      expect(blamedReference(e, sent(body, 'gemini-2.0-flash'))).toBeUndefined();
    },
  );
});

// A body over 64 KiB is read as a small one is: a pre-filter on the message's exact words missed
// what the upstream case-folded or what only a decoded URL segment holds, and the 404 counted.
describe('blamedReference: a large body', () => {
  const PAD = 'x'.repeat(70 * 1024);
  const ANTHROPIC = 'https://api.anthropic.com/v1/messages';
  const anthropicFile = (id: string, pad: string) => ({
    model: 'claude-x',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: pad },
          { type: 'document', source: { type: 'file', file_id: id } },
        ],
      },
    ],
  });
  it.each([
    ['case-folded', 'ABCDEFGH', 'File not found: abcdefgh'],
    ['no word of three letters or more', 'ab.cd.ef', 'File not found: ab.cd.ef'],
    ['as sent', 'abcdefgh', 'File not found: abcdefgh'],
  ])('an Anthropic file_id %s, padded past 64 KiB', (_name, id, message) => {
    const e = error(404, message, { code: 'not_found_error' });
    for (const pad of ['', PAD])
      expect(blameRequest(e, { ...sent(anthropicFile(id, pad), 'claude-x'), url: ANTHROPIC }).kind).toBe(
        'bad_reference',
      );
  });

  it('a file URL named by its percent-decoded last segment, padded past 64 KiB', () => {
    const e = error(404, 'No such File object: ab-cd');
    const body = (pad: string) => ({
      model: 'gpt-4o',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: pad },
            { type: 'file', file: { file_url: 'https://h.example/f/ab%2Dcd' } },
          ],
        },
      ],
    });
    const url = 'https://api.openai.com/v1/chat/completions';
    for (const pad of ['', PAD])
      expect(blameRequest(e, { ...sent(body(pad)), url }).kind).toBe('bad_reference');
  });

  it('a reference field spelled with escaped letters is still read', () => {
    const e = error(404, 'File not found: abcdefgh');
    const body = `{"model":"claude-x","pad":"${PAD}","source":{"file\\u005fid":"ABCDEFGH"}}`;
    expect(blameRequest(e, { body, upstreamModel: 'claude-x', url: ANTHROPIC }).kind).toBe('bad_reference');
  });
});

// A path in the message is a route echo only when the whole path is part of the route: a fake
// id equal to a route word, named as the upstream's resource path, is still the caller's.
describe('blamedReference: route echoes and resource paths', () => {
  const fileBody = (id: string) => ({
    model: 'claude-x',
    messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: id } }] }],
  });
  it.each([
    ['messages', 'File not found: files/messages', 'https://api.anthropic.com/v1/messages'],
    ['messages', 'File not found: files/messages.', 'https://api.anthropic.com/v1/messages'],
    ['v1/messages', 'File not found: files/v1/messages', 'https://api.anthropic.com/v1/messages'],
    [
      'completions',
      'No such File object: /v1/files/completions',
      'https://api.openai.com/v1/chat/completions',
    ],
  ])('a file_id %s named as %s is the caller’s', (id, message, url) => {
    const e = error(404, message);
    expect(blamedReference(e, { ...sent(fileBody(id), 'claude-x'), url })).toEqual({
      param: 'messages[0].content[0].source.file_id',
      id,
    });
  });

  it.each([
    ['Invalid URL (POST /v1/v1/chat/completions)', 'http://u/v1/v1/chat/completions'],
    ['Route POST:/v1/v1/chat/completions not found', 'http://u/v1/v1/chat/completions'],
    ['Not found: https://u/v1/v1/chat/completions?x=1.', 'http://u/v1/v1/chat/completions'],
  ])('a route echo (%s) naming a route word the caller also sent is the deployment’s', (message, url) => {
    const e = error(404, message);
    expect(blamedReference(e, { ...sent(fileBody('completions'), 'claude-x'), url })).toBeUndefined();
  });
});

// Only a message's first 1,024 characters are read; ids in request bodies are not capped there.
describe('blamedReference: an id longer than the message read', () => {
  const ANTHROPIC = 'https://api.anthropic.com/v1/messages';
  const fileBody = (id: string) => ({
    model: 'claude-x',
    messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: id } }] }],
  });
  it.each([
    ['all one letter', 'f'.repeat(1100)],
    ['mixed', `file_${'Ab9-'.repeat(300)}`],
  ])('a file_id of over 1,024 characters (%s), echoed in full, is the caller’s', (_name, id) => {
    const e = error(404, `File not found: ${id}`);
    expect(blamedReference(e, { ...sent(fileBody(id), 'claude-x'), url: ANTHROPIC })).toMatchObject({
      param: 'messages[0].content[0].source.file_id',
    });
  });

  it('but not a cut message ending in a start of the id shorter than 64 characters', () => {
    const id = `${'g'.repeat(60)}${'h'.repeat(1100)}`;
    const e = error(404, `${'x '.repeat(500)}File not found: ${id}`);
    expect(blamedReference(e, { ...sent(fileBody(id), 'claude-x'), url: ANTHROPIC })).toBeUndefined();
  });

  it('nor a message that was not cut, naming only a start of the id', () => {
    const id = 'k'.repeat(200);
    const e = error(404, `File not found: ${id.slice(0, 100)}`);
    expect(blamedReference(e, { ...sent(fileBody(id), 'claude-x'), url: ANTHROPIC })).toBeUndefined();
  });
});

describe('a key with no quota ("Limit 0")', () => {
  it.each([
    error(429, 'Request too large for gpt-4o on tokens per min (TPM): Limit 0, Requested 50.', {
      retryAfterMs: 1000,
    }),
    error(413, 'Request too large for model `x` on tokens per minute (TPM): Limit 0, Requested 7591'),
  ])('is the deployment’s, counted as a key without the model, not too_large', (e) => {
    const out = blameRequest(e, sent(openaiBody));
    expect(out.kind).toBe('auth');
    expect(out.retryAfterMs).toBeUndefined();
    expect(tooLarge(e)).toBeUndefined();
  });
});
