import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.ts';
import type { ChatRequest } from '../../formats/openai/types.ts';
import type { UpstreamTarget } from '../types.ts';
import { anthropicAdapter } from './index.ts';
import { REASONING_BUDGETS, toAnthropicBody } from './request.ts';

const target: UpstreamTarget = {
  provider: 'anthropic',
  baseUrl: 'https://api.anthropic.com/v1',
  upstreamModel: 'claude-sonnet-4-5',
  apiKey: 'sk-ant-test',
  prefill: true,
};
const base = (over: Partial<ChatRequest>): ChatRequest => ({
  model: 'gantry-model',
  messages: [{ role: 'user', content: 'Hi' }],
  ...over,
});
const body = (over: Partial<ChatRequest>, t: Partial<UpstreamTarget> = {}) =>
  toAnthropicBody(base(over), { ...target, ...t });

describe('anthropic request: wire call', () => {
  it('posts to {baseUrl}/messages with x-api-key and anthropic-version', () => {
    const req = anthropicAdapter.chat.request(base({ stream: true }), target);
    expect(req.method).toBe('POST');
    expect(req.url).toBe('https://api.anthropic.com/v1/messages');
    expect(req.headers).toMatchObject({
      'x-api-key': 'sk-ant-test',
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
    });
    expect(JSON.parse(req.body ?? '')).toMatchObject({
      model: 'claude-sonnet-4-5',
      stream: true,
      max_tokens: 4096,
    });
  });
});

describe('anthropic request: translation table', () => {
  const cases: {
    name: string;
    req: Partial<ChatRequest>;
    target?: Partial<UpstreamTarget>;
    expect: Record<string, unknown>;
  }[] = [
    {
      name: 'system and developer messages join the system field',
      req: {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [{ type: 'text', text: 'Use French.' }] },
          { role: 'user', content: 'Hi' },
        ],
      },
      expect: {
        system: [
          { type: 'text', text: 'Be brief.' },
          { type: 'text', text: 'Use French.' },
        ],
        messages: [{ role: 'user', content: 'Hi' }],
      },
    },
    {
      name: 'a single system message becomes a string',
      req: {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
      },
      expect: { system: 'Be brief.' },
    },
    {
      name: 'consecutive user messages are merged',
      req: {
        messages: [
          { role: 'user', content: 'One' },
          { role: 'user', content: 'Two' },
        ],
      },
      expect: {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'One' },
              { type: 'text', text: 'Two' },
            ],
          },
        ],
      },
    },
    {
      name: 'max_completion_tokens wins over max_tokens; 4096 when absent',
      req: { max_tokens: 10, max_completion_tokens: 20 },
      expect: { max_tokens: 20 },
    },
    {
      name: 'temperature is clamped into 0..1 and top_p dropped when both are set',
      req: { temperature: 1.7, top_p: 0.9 },
      expect: { temperature: 1, top_p: undefined },
    },
    { name: 'top_p alone is kept', req: { top_p: 0.9 }, expect: { top_p: 0.9 } },
    {
      name: 'stop becomes stop_sequences, whitespace-only entries dropped',
      req: { stop: ['END', '\n'] },
      expect: { stop_sequences: ['END'] },
    },
    {
      name: 'a string stop becomes a one-item list',
      req: { stop: 'END' },
      expect: { stop_sequences: ['END'] },
    },
    {
      name: 'user becomes metadata.user_id',
      req: { user: 'u-42' },
      expect: { metadata: { user_id: 'u-42' } },
    },
    {
      name: 'dropped parameters do not reach Anthropic',
      req: {
        n: 2,
        seed: 1,
        presence_penalty: 1,
        frequency_penalty: 1,
        logit_bias: { 1: 2 },
        stream_options: { include_usage: true },
      },
      expect: {
        n: undefined,
        seed: undefined,
        presence_penalty: undefined,
        frequency_penalty: undefined,
        logit_bias: undefined,
        stream_options: undefined,
      },
    },
    {
      name: 'json_object response_format adds a system instruction',
      req: {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
        response_format: { type: 'json_object' },
      },
      expect: {
        system: [
          { type: 'text', text: 'Be brief.' },
          { type: 'text', text: expect.stringContaining('JSON') },
        ],
      },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const out = body(c.req, c.target) as unknown as Record<string, unknown>;
      for (const [key, value] of Object.entries(c.expect)) expect(out[key], key).toEqual(value);
    });
  }
});

describe('anthropic request: tools', () => {
  const tools: ChatRequest['tools'] = [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Weather',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
      },
    },
    { type: 'function', function: { name: 'noop' } },
  ];

  it('maps definitions to input_schema (an empty object schema when absent)', () => {
    expect(body({ tools }).tools).toEqual([
      {
        name: 'get_weather',
        description: 'Weather',
        input_schema: { type: 'object', properties: { city: { type: 'string' } } },
      },
      { name: 'noop', input_schema: { type: 'object', properties: {} } },
    ]);
  });

  it.each([
    ['auto', { type: 'auto' }],
    ['required', { type: 'any' }],
    ['none', { type: 'none' }],
    [
      { type: 'function', function: { name: 'noop' } },
      { type: 'tool', name: 'noop' },
    ],
  ] as const)('tool_choice %j → %j', (choice, expected) => {
    expect(body({ tools, tool_choice: choice }).tool_choice).toEqual(expected);
  });

  it('parallel_tool_calls false disables parallel tool use', () => {
    expect(body({ tools, parallel_tool_calls: false }).tool_choice).toEqual({
      type: 'auto',
      disable_parallel_tool_use: true,
    });
    expect(body({ tools, tool_choice: 'required', parallel_tool_calls: false }).tool_choice).toEqual({
      type: 'any',
      disable_parallel_tool_use: true,
    });
  });

  it('drops tool_choice without tools', () => {
    expect(body({ tool_choice: 'required' }).tool_choice).toBeUndefined();
  });

  it('assistant tool_calls become tool_use blocks and tool messages user tool_result blocks', () => {
    const out = body({
      tools,
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: 'not json' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18C' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '21C' }], is_error: true },
        { role: 'user', content: 'Thanks' },
      ],
    });
    expect(out.messages).toEqual([
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'get_weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '18C' },
          { type: 'tool_result', tool_use_id: 'call_2', content: '21C', is_error: true },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);
  });

  it('puts tool results before text when a user message precedes them in one turn', () => {
    const out = body({
      messages: [
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'noop', arguments: '{}' } }],
        },
        { role: 'user', content: 'note' },
        { role: 'tool', tool_call_id: 'c', content: 'ok' },
      ],
    });
    expect(out.messages[1]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'c', content: 'ok' },
        { type: 'text', text: 'note' },
      ],
    });
  });
});

describe('anthropic request: images and documents', () => {
  it('maps data URLs to base64 sources, http(s) to url sources, PDFs to documents', () => {
    const out = body({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
            { type: 'image_url', image_url: { url: 'data:application/pdf;base64,JVBERi0xLjQ=' } },
            {
              type: 'file',
              file: { filename: 'spec.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjc=' },
            },
          ],
        },
      ],
    });
    expect(out.messages[0]?.content).toEqual([
      { type: 'text', text: 'Compare' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQ=' } },
      {
        type: 'document',
        source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjc=' },
        title: 'spec.pdf',
      },
    ]);
  });

  it('refuses parts Anthropic cannot take instead of dropping them', () => {
    const audio = base({
      messages: [
        { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAA', format: 'wav' } }] },
      ],
    });
    expect(() => toAnthropicBody(audio, target)).toThrow(GatewayError);
    const ftp = base({
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }],
    });
    expect(() => toAnthropicBody(ftp, target)).toThrow(/neither http/);
  });
});

describe('anthropic request: prefill', () => {
  const messages: ChatRequest['messages'] = [
    { role: 'user', content: 'Give me JSON' },
    { role: 'assistant', content: '{"answer": \n ' },
  ];

  it('keeps a trailing assistant message, trimmed of trailing whitespace', () => {
    expect(body({ messages }).messages).toEqual([
      { role: 'user', content: 'Give me JSON' },
      { role: 'assistant', content: '{"answer":' },
    ]);
  });

  it('drops it when the deployment does not accept prefill', () => {
    expect(body({ messages }, { prefill: false }).messages).toEqual([
      { role: 'user', content: 'Give me JSON' },
    ]);
  });

  it('drops a whitespace-only prefill', () => {
    const out = body({
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: '  \n' },
      ],
    });
    expect(out.messages).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it('turns thinking off rather than send it with a prefill (Anthropic refuses both)', () => {
    const out = body({ messages, reasoning_effort: 'high' });
    expect(out.thinking).toBeUndefined();
  });
});

describe('anthropic request: reasoning effort → thinking', () => {
  it('exports the budget mapping', () => {
    expect(REASONING_BUDGETS).toMatchObject({ low: 1024, medium: 4096, high: 16384 });
  });

  it.each([
    ['low', 1024],
    ['medium', 4096],
    ['high', 16384],
  ])('%s → budget %d, max_tokens raised above the budget', (effort, budget) => {
    const out = body({ reasoning_effort: effort, max_tokens: 1000, temperature: 0.2, top_p: 0.5 });
    expect(out.thinking).toEqual({ type: 'enabled', budget_tokens: budget });
    expect(out.max_tokens).toBe(budget + 1000);
    // Anthropic accepts neither a custom temperature nor top_p < 0.95 with thinking.
    expect(out.temperature).toBeUndefined();
    expect(out.top_p).toBeUndefined();
  });

  it('keeps a max_tokens already above the budget', () => {
    expect(body({ reasoning_effort: 'low', max_tokens: 8000 }).max_tokens).toBe(8000);
  });

  it('none and forced tool use mean no thinking', () => {
    expect(body({ reasoning_effort: 'none' }).thinking).toBeUndefined();
    const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'f' } }];
    expect(body({ reasoning_effort: 'high', tools, tool_choice: 'required' }).thinking).toBeUndefined();
  });

  it('sends back signed thinking blocks and drops unsigned reasoning', () => {
    const out = body({
      messages: [
        { role: 'user', content: 'Q' },
        {
          role: 'assistant',
          content: null,
          reasoning_content: 'hmm',
          thinking_blocks: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }],
          tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 't', content: 'r' },
        { role: 'assistant', content: 'A', reasoning_content: 'unsigned, from another provider' },
        { role: 'user', content: 'Q2' },
      ],
    });
    expect(out.messages[1]?.content).toEqual([
      { type: 'thinking', thinking: 'hmm', signature: 'sig' },
      { type: 'tool_use', id: 't', name: 'f', input: {} },
    ]);
    expect(out.messages[3]).toEqual({ role: 'assistant', content: 'A' });
  });
});
