import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.ts';
import type { ChatRequest } from '../../formats/openai/types.ts';
import type { UpstreamTarget } from '../types.ts';
import { geminiAdapter } from './index.ts';
import { guessMimeType, SKIP_THOUGHT_SIGNATURE, toolResponse } from './messages.ts';
import { THINKING_BUDGETS, toGeminiRequest } from './request.ts';

const target: UpstreamTarget = {
  provider: 'gemini',
  baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
  upstreamModel: 'gemini-2.5-flash',
  apiKey: 'k-123',
  prefill: false,
};

const req = (over: Partial<ChatRequest>): ChatRequest => ({ model: 'm', messages: [], ...over });

describe('gemini request: envelope', () => {
  it('posts to generateContent with the api key header', () => {
    const r = geminiAdapter.chat.request(req({ messages: [{ role: 'user', content: 'hi' }] }), target);
    expect(r.method).toBe('POST');
    expect(r.url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent',
    );
    expect(r.headers).toEqual({ 'content-type': 'application/json', 'x-goog-api-key': 'k-123' });
    expect(JSON.parse(r.body ?? '')).toEqual({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
  });

  it('streams through streamGenerateContent?alt=sse and tolerates a models/ prefix', () => {
    const r = geminiAdapter.chat.request(req({ stream: true, messages: [{ role: 'user', content: 'x' }] }), {
      ...target,
      upstreamModel: 'models/gemini-2.5-pro',
      apiKey: undefined,
    });
    expect(r.url).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
    );
    expect(r.headers['x-goog-api-key']).toBeUndefined();
  });
});

describe('gemini request: translation table', () => {
  const cases: { name: string; in: Partial<ChatRequest>; out: Record<string, unknown> }[] = [
    {
      name: 'system and developer messages become one systemInstruction',
      in: {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [{ type: 'text', text: 'Use SI units.' }] },
          { role: 'user', content: 'hi' },
        ],
      },
      out: {
        systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Use SI units.' }] },
        contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      },
    },
    {
      name: 'assistant becomes model; consecutive same-role messages merge',
      in: {
        messages: [
          { role: 'user', content: 'a' },
          { role: 'user', content: 'b' },
          { role: 'assistant', content: 'c' },
          { role: 'assistant', content: '' },
          { role: 'user', content: 'd' },
        ],
      },
      out: {
        contents: [
          { role: 'user', parts: [{ text: 'a' }, { text: 'b' }] },
          { role: 'model', parts: [{ text: 'c' }] },
          { role: 'user', parts: [{ text: 'd' }] },
        ],
      },
    },
    {
      name: 'tools with cleaned schemas; parameterless function omits parameters',
      in: {
        messages: [{ role: 'user', content: 'weather?' }],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'Weather for a city',
              strict: true,
              parameters: {
                $schema: 'http://json-schema.org/draft-07/schema#',
                type: 'object',
                additionalProperties: false,
                properties: {
                  city: { type: 'string', format: 'hostname' },
                  unit: { type: ['string', 'null'], enum: ['c', 'f'] },
                },
                required: ['city', 'ghost'],
              },
            },
          },
          { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } },
        ],
        tool_choice: 'required',
      },
      out: {
        contents: [{ role: 'user', parts: [{ text: 'weather?' }] }],
        tools: [
          {
            functionDeclarations: [
              {
                name: 'get_weather',
                description: 'Weather for a city',
                parameters: {
                  type: 'OBJECT',
                  properties: {
                    city: { type: 'STRING' },
                    unit: { type: 'STRING', nullable: true, enum: ['c', 'f'] },
                  },
                  required: ['city'],
                },
              },
              { name: 'now' },
            ],
          },
        ],
        toolConfig: { functionCallingConfig: { mode: 'ANY' } },
      },
    },
    {
      name: 'tool round trip: calls become functionCall, results functionResponse named by call id',
      in: {
        messages: [
          { role: 'user', content: 'weather in Oslo and Rome?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_a',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
              },
              {
                id: 'call_b',
                type: 'function',
                function: { name: 'get_time', arguments: '{"city":"Rome"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'call_b', content: '"12:00"' },
          { role: 'tool', tool_call_id: 'call_a', content: '{"temp":3}' },
          { role: 'user', content: 'thanks' },
        ],
      },
      out: {
        contents: [
          { role: 'user', parts: [{ text: 'weather in Oslo and Rome?' }] },
          {
            role: 'model',
            parts: [
              {
                functionCall: { name: 'get_weather', args: { city: 'Oslo' } },
                thoughtSignature: SKIP_THOUGHT_SIGNATURE,
              },
              { functionCall: { name: 'get_time', args: { city: 'Rome' } } },
            ],
          },
          {
            role: 'user',
            parts: [
              { functionResponse: { name: 'get_time', response: { result: '12:00' } } },
              { functionResponse: { name: 'get_weather', response: { temp: 3 } } },
              { text: 'thanks' },
            ],
          },
        ],
      },
    },
    {
      name: 'images: data URL inline, http(s) URL as fileData',
      in: {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'compare' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
              {
                type: 'image_url',
                image_url: { url: 'https://example.com/cat.webp?size=2', detail: 'high' },
              },
            ],
          },
        ],
      },
      out: {
        contents: [
          {
            role: 'user',
            parts: [
              { text: 'compare' },
              { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
              { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.webp?size=2' } },
            ],
          },
        ],
      },
    },
    {
      name: 'PDF data URL travels as inline application/pdf',
      in: {
        messages: [
          {
            role: 'user',
            content: [{ type: 'image_url', image_url: { url: 'data:application/pdf;base64,JVBERi0xLjQ=' } }],
          },
        ],
      },
      out: {
        contents: [
          { role: 'user', parts: [{ inlineData: { mimeType: 'application/pdf', data: 'JVBERi0xLjQ=' } }] },
        ],
      },
    },
    {
      name: 'json_object mode and sampling parameters',
      in: {
        messages: [{ role: 'user', content: 'json please' }],
        response_format: { type: 'json_object' },
        temperature: 0.2,
        top_p: 0.9,
        max_tokens: 100,
        max_completion_tokens: 200,
        stop: 'END',
        presence_penalty: 0.5,
        frequency_penalty: -0.5,
        n: 2,
        seed: 7,
        tool_choice: 'auto',
      },
      out: {
        contents: [{ role: 'user', parts: [{ text: 'json please' }] }],
        generationConfig: {
          responseMimeType: 'application/json',
          temperature: 0.2,
          topP: 0.9,
          maxOutputTokens: 200,
          stopSequences: ['END'],
          presencePenalty: 0.5,
          frequencyPenalty: -0.5,
          candidateCount: 2,
          seed: 7,
        },
      },
    },
    {
      name: 'json_schema mode becomes responseSchema',
      in: {
        messages: [{ role: 'user', content: 'x' }],
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'answer',
            strict: true,
            schema: {
              type: 'object',
              properties: { n: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
              required: ['n'],
              additionalProperties: false,
            },
          },
        },
      },
      out: {
        contents: [{ role: 'user', parts: [{ text: 'x' }] }],
        generationConfig: {
          responseMimeType: 'application/json',
          responseSchema: {
            type: 'OBJECT',
            properties: { n: { type: 'INTEGER' }, tags: { type: 'ARRAY', items: { type: 'STRING' } } },
            required: ['n'],
          },
        },
      },
    },
    {
      name: 'reasoning effort becomes a thinking budget with thought summaries',
      in: { messages: [{ role: 'user', content: 'think' }], reasoning_effort: 'medium' },
      out: {
        contents: [{ role: 'user', parts: [{ text: 'think' }] }],
        generationConfig: { thinkingConfig: { thinkingBudget: 8192, includeThoughts: true } },
      },
    },
    {
      name: 'unknown reasoning effort and n=1 leave the model defaults',
      in: { messages: [{ role: 'user', content: 'x' }], reasoning_effort: 'extreme', n: 1 },
      out: { contents: [{ role: 'user', parts: [{ text: 'x' }] }] },
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      expect(toGeminiRequest(req(c.in))).toEqual(c.out);
    });
  }
});

describe('gemini request: details', () => {
  it('maps every tool_choice form', () => {
    const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'f' } }];
    const mode = (tool_choice: ChatRequest['tool_choice']) =>
      toGeminiRequest(req({ messages: [{ role: 'user', content: 'x' }], tools, tool_choice })).toolConfig;
    expect(mode('auto')).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(mode('none')).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(mode('required')).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(mode({ type: 'function', function: { name: 'f' } })).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] },
    });
    expect(mode(undefined)).toBeUndefined();
  });

  it('exports the effort → budget table', () => {
    expect(THINKING_BUDGETS).toEqual({ low: 1024, medium: 8192, high: 24576 });
  });

  it('wraps non-object tool results', () => {
    expect(toolResponse('{"a":1}')).toEqual({ a: 1 });
    expect(toolResponse('[1,2]')).toEqual({ result: [1, 2] });
    expect(toolResponse('42')).toEqual({ result: 42 });
    expect(toolResponse('plain text')).toEqual({ result: 'plain text' });
  });

  it('binds a repeated call id to the nearest earlier call', () => {
    const out = toGeminiRequest(
      req({
        messages: [
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'a', arguments: '' } }],
          },
          { role: 'tool', tool_call_id: 'call_0', content: 'x' },
          {
            role: 'assistant',
            tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'b', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'call_0', content: 'y' },
        ],
      }),
    );
    expect(out.contents.map((c) => c.parts[0])).toEqual([
      { text: 'go' },
      { functionCall: { name: 'a', args: {} }, thoughtSignature: SKIP_THOUGHT_SIGNATURE },
      { functionResponse: { name: 'a', response: { result: 'x' } } },
      { functionCall: { name: 'b', args: {} }, thoughtSignature: SKIP_THOUGHT_SIGNATURE },
      { functionResponse: { name: 'b', response: { result: 'y' } } },
    ]);
  });

  it('joins text parts of a tool result', () => {
    const out = toGeminiRequest(
      req({
        messages: [
          {
            role: 'assistant',
            tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          {
            role: 'tool',
            tool_call_id: 't',
            content: [
              { type: 'text', text: '{"ok":' },
              { type: 'text', text: 'true}' },
            ],
          },
        ],
      }),
    );
    expect(out.contents[1]?.parts[0]).toEqual({ functionResponse: { name: 'f', response: { ok: true } } });
  });

  it('rejects a tool result for an unknown call and unsupported parts', () => {
    expect(() =>
      toGeminiRequest(req({ messages: [{ role: 'tool', tool_call_id: 'nope', content: 'x' }] })),
    ).toThrow(GatewayError);
    expect(() =>
      toGeminiRequest(
        req({ messages: [{ role: 'user', content: [{ type: 'video_url', video_url: 'x' }] }] }),
      ),
    ).toThrow(/messages\[0\]\.content\[0\]/);
    expect(() =>
      toGeminiRequest(
        req({
          messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }],
        }),
      ),
    ).toThrow(GatewayError);
  });

  it('accepts non-base64 data URLs, audio and file parts', () => {
    const out = toGeminiRequest(
      req({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url: 'data:text/plain,hi%20there' } },
              { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
              { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBE' } },
            ],
          },
        ],
      }),
    );
    expect(out.contents[0]?.parts).toEqual([
      { inlineData: { mimeType: 'text/plain', data: Buffer.from('hi there').toString('base64') } },
      { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBE' } },
    ]);
  });

  it('guesses fileData MIME types from the URL path', () => {
    expect(guessMimeType('https://x.test/a/doc.PDF')).toBe('application/pdf');
    expect(guessMimeType('https://x.test/photo.jpg#frag')).toBe('image/jpeg');
    expect(guessMimeType('https://x.test/render?id=1')).toBe('image/jpeg');
  });
});
