import type { Capability } from '@gantry/crds';
import { describe, expect, it } from 'vitest';
import type { ModelRoute } from '../config/snapshot.ts';
import { GatewayError } from '../errors.ts';
import type { ChatMessage, ChatRequest, ContentPart } from '../formats/openai/types.ts';
import {
  chatOutputField,
  checkCapabilities,
  checkCompletionChoices,
  checkOutputBound,
  completionSequences,
  DOCUMENT_MEDIA_TYPES,
  IMAGE_MEDIA_TYPES,
  inspectChat,
  MAX_FILE_BYTES,
  type ChatNeeds,
  type Endpoint,
} from './validate.ts';

const image = (url: unknown): ContentPart => ({ type: 'image_url', image_url: { url } }) as ContentPart;
const text = (t: string): ContentPart => ({ type: 'text', text: t });
const dataUrl = (mediaType: string, payload = 'iVBORw0KGgo=') => `data:${mediaType};base64,${payload}`;

const chat = (messages: ChatMessage[], extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'm',
  messages,
  ...extra,
});
const user = (...parts: ContentPart[]): ChatMessage => ({ role: 'user', content: parts });

function thrown(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected a GatewayError');
}

describe('inspectChat: what the request needs', () => {
  it('a plain chat needs only chat, because of messages', () => {
    expect(inspectChat(chat([{ role: 'user', content: 'hi' }]))).toEqual({
      capabilities: ['chat'],
      because: { chat: 'messages' },
    });
  });

  it('stream: true needs streaming; stream: false does not', () => {
    expect(inspectChat(chat([], { stream: true })).because).toEqual({
      chat: 'messages',
      streaming: 'stream',
    });
    expect(inspectChat(chat([], { stream: false })).capabilities).toEqual(['chat']);
  });

  it('non-empty tools need tools; an empty list does not', () => {
    const tool = { type: 'function' as const, function: { name: 'f' } };
    expect(inspectChat(chat([], { tools: [tool] })).because.tools).toBe('tools');
    expect(inspectChat(chat([], { tools: [] })).capabilities).toEqual(['chat']);
  });

  it('an http(s) image URL needs vision, naming the first such part', () => {
    const needs = inspectChat(
      chat([
        { role: 'system', content: 'be brief' },
        user(text('look'), image('https://x/a.png')),
        user(image('http://x/b.png')),
      ]),
    );
    expect(needs.capabilities).toEqual(['chat', 'vision']);
    expect(needs.because.vision).toBe('messages[1].content[1].image_url.url');
  });

  it('a PDF data URL needs documents, an image one vision; each names its own part', () => {
    const needs = inspectChat(
      chat([
        user(image(dataUrl('image/png'))),
        { role: 'assistant', content: 'ok' },
        user(text('and'), image(dataUrl('application/pdf'))),
      ]),
    );
    expect(new Set(needs.capabilities)).toEqual(new Set(['chat', 'vision', 'documents']));
    expect(needs.because.vision).toBe('messages[0].content[0].image_url.url');
    expect(needs.because.documents).toBe('messages[2].content[1].image_url.url');
  });

  it('everything at once', () => {
    const needs = inspectChat(
      chat([user(image(dataUrl('application/pdf')))], {
        stream: true,
        tools: [{ type: 'function', function: { name: 'f' } }],
      }),
    );
    expect(new Set(needs.capabilities)).toEqual(new Set(['chat', 'streaming', 'tools', 'documents']));
  });

  it('text-only parts and other part kinds need nothing more', () => {
    const needs = inspectChat(
      chat([user(text('a'), { type: 'input_audio', input_audio: { data: 'x', format: 'wav' } })]),
    );
    expect(needs.capabilities).toEqual(['chat']);
  });
});

describe('inspectChat: media types', () => {
  it('the accepted set is exactly the SPEC.md list', () => {
    expect([...IMAGE_MEDIA_TYPES].sort()).toEqual(['image/gif', 'image/jpeg', 'image/png', 'image/webp']);
    expect([...DOCUMENT_MEDIA_TYPES]).toEqual(['application/pdf']);
  });

  it.each([...IMAGE_MEDIA_TYPES])('%s is accepted as an image', (type) => {
    expect(inspectChat(chat([user(image(dataUrl(type)))])).because.vision).toBeDefined();
  });

  it.each(['IMAGE/PNG', 'Image/Jpeg', 'APPLICATION/PDF'])('media types are case-insensitive: %s', (type) => {
    expect(() => inspectChat(chat([user(image(dataUrl(type)))]))).not.toThrow();
  });

  it('extra data-URL parameters before base64 are allowed', () => {
    const needs = inspectChat(chat([user(image('data:application/pdf;name=a.pdf;base64,JVBERi0='))]));
    expect(needs.because.documents).toBeDefined();
  });

  it.each([
    'image/svg+xml',
    'image/bmp',
    'image/tiff',
    'image/heic',
    'text/plain',
    'application/octet-stream',
    'video/mp4',
  ])('%s is rejected with a 400 naming the part and listing what is accepted', (type) => {
    const err = thrown(() => inspectChat(chat([user(text('x'), image(dataUrl(type)))])));
    expect(err.status).toBe(400);
    expect(err.type).toBe('invalid_request_error');
    expect(err.param).toBe('messages[0].content[1].image_url.url');
    expect(err.message).toContain(`unsupported media type ${type}`);
    expect(err.message).toContain('image/png, image/jpeg, image/gif, image/webp, application/pdf');
  });

  it('a data URL without a media type is rejected', () => {
    const err = thrown(() => inspectChat(chat([user(image('data:;base64,AAAA'))])));
    expect(err.status).toBe(400);
    expect(err.message).toContain('(none)');
  });

  it.each([
    ['no base64 marker', 'data:image/png,rawbytes'],
    ['no comma', 'data:image/png;base64'],
    ['base64 only as a value', 'data:image/png;charset=base64,AAAA'],
  ])('a non-base64 data URL (%s) is rejected', (_, url) => {
    const err = thrown(() => inspectChat(chat([user(image(url))])));
    expect(err.status).toBe(400);
    expect(err.param).toBe('messages[0].content[0].image_url.url');
    expect(err.message).toContain('data:<media type>;base64,<data>');
  });

  it.each(['ftp://x/a.png', 'file:///etc/passwd', '/local.png', 'x'])(
    'a URL that is neither http(s) nor data (%s) is rejected',
    (url) => {
      const err = thrown(() => inspectChat(chat([user(image(url))])));
      expect(err.status).toBe(400);
      expect(err.message).toContain('http(s) URL or a data URL');
    },
  );

  it.each([undefined, 42, null, { href: 'x' }])(
    'a non-string url (%j) is rejected naming the field',
    (url) => {
      const err = thrown(() => inspectChat(chat([{ role: 'user', content: 'a' }, user(image(url))])));
      expect(err.status).toBe(400);
      expect(err.param).toBe('messages[1].content[0].image_url.url');
      expect(err.message).toBe('messages[1].content[0].image_url.url: must be a string');
    },
  );
});

describe('inspectChat: file size', () => {
  /** A base64 payload that decodes to exactly `bytes` bytes (multiple of 3: no padding). */
  const payloadFor = (bytes: number) => 'A'.repeat((bytes / 3) * 4);
  const limit = MAX_FILE_BYTES - (MAX_FILE_BYTES % 3);

  it('a file at the limit is accepted', () => {
    expect(() => inspectChat(chat([user(image(dataUrl('image/png', payloadFor(limit))))]))).not.toThrow();
  });

  it.each(['image/png', 'application/pdf'])('a %s file above the limit is a 413 naming the part', (type) => {
    const over = dataUrl(type, payloadFor(limit + 3));
    const err = thrown(() => inspectChat(chat([user(text('x'), image(over))])));
    expect(err.status).toBe(413);
    expect(err.type).toBe('request_too_large');
    expect(err.param).toBe('messages[0].content[1].image_url.url');
    expect(err.message).toContain(String(MAX_FILE_BYTES));
  });

  it('exactly MAX_FILE_BYTES is accepted, one byte more is a 413', () => {
    // The smallest payload length that decodes to `bytes` bytes by the 3/4 rule.
    const lengthFor = (bytes: number) => Math.ceil((bytes * 4) / 3);
    const at = dataUrl('image/png', 'A'.repeat(lengthFor(MAX_FILE_BYTES)));
    expect(() => inspectChat(chat([user(image(at))]))).not.toThrow();
    const over = dataUrl('image/png', 'A'.repeat(lengthFor(MAX_FILE_BYTES + 1)));
    expect(thrown(() => inspectChat(chat([user(image(over))]))).status).toBe(413);
  });

  it('size is checked before the media type (an oversize file of a wrong type is still 413)', () => {
    const err = thrown(() => inspectChat(chat([user(image(dataUrl('image/bmp', payloadFor(limit + 3))))])));
    expect(err.status).toBe(413);
  });
});

describe('checkCapabilities', () => {
  const route = (caps: Capability[]): ModelRoute => ({
    model: 'mod',
    deployments: [],
    fallbacks: [],
    capabilities: new Set(caps),
    ownedBy: 'openai',
  });

  it.each([
    ['chat', '/v1/chat/completions'],
    ['embeddings', '/v1/embeddings'],
    ['completions', '/v1/completions'],
  ] as const)(
    'an endpoint the model lacks (%s) is a 400 naming the model and the endpoint',
    (endpoint, path) => {
      const err = thrown(() => checkCapabilities(route(['reasoning']), endpoint as Endpoint, undefined));
      expect(err.status).toBe(400);
      expect(err.type).toBe('unsupported_endpoint');
      expect(err.param).toBe('model');
      expect(err.message).toBe(`model mod does not support the ${path} endpoint`);
    },
  );

  it('passes when the model has the endpoint and every need', () => {
    const needs = inspectChat(chat([user(image(dataUrl('application/pdf')))], { stream: true }));
    expect(() => checkCapabilities(route(['chat', 'streaming', 'documents']), 'chat', needs)).not.toThrow();
    expect(() => checkCapabilities(route(['embeddings']), 'embeddings', undefined)).not.toThrow();
  });

  const cases: { need: Capability; req: ChatRequest; param: string; what: string }[] = [
    { need: 'streaming', req: chat([], { stream: true }), param: 'stream', what: 'streaming' },
    {
      need: 'tools',
      req: chat([], { tools: [{ type: 'function', function: { name: 'f' } }] }),
      param: 'tools',
      what: 'tools',
    },
    {
      need: 'vision',
      req: chat([{ role: 'user', content: 'x' }, user(image('https://x/y.png'))]),
      param: 'messages[1].content[0].image_url.url',
      what: 'vision',
    },
    {
      need: 'documents',
      req: chat([user(text('read'), image(dataUrl('application/pdf')))]),
      param: 'messages[0].content[1].image_url.url',
      what: 'document (PDF) input',
    },
  ];

  it.each(cases)('a model without $need is refused naming $param', ({ need, req, param, what }) => {
    const all: Capability[] = ['chat', 'streaming', 'tools', 'vision', 'documents'];
    const err = thrown(() =>
      checkCapabilities(route(all.filter((c) => c !== need)), 'chat', inspectChat(req)),
    );
    expect(err.status).toBe(400);
    expect(err.type).toBe('invalid_request_error');
    expect(err.param).toBe(param);
    expect(err.message).toBe(`${param}: model mod does not support ${what}`);
  });

  it('a need without a recorded reason names the model', () => {
    const needs: ChatNeeds = { capabilities: ['chat', 'reasoning'], because: { chat: 'messages' } };
    const err = thrown(() => checkCapabilities(route(['chat']), 'chat', needs));
    expect(err.param).toBe('model');
  });
});

describe('output bounds and multipliers', () => {
  const windows = (...w: (number | undefined)[]): ModelRoute =>
    ({
      model: 'm',
      fallbacks: [],
      capabilities: new Set(['chat']),
      deployments: w.map((contextWindow, i) => ({ name: `d${i}`, contextWindow })),
    }) as unknown as ModelRoute;

  it('refuses an output bound above every context window of the model, naming the field', () => {
    const e = thrown(() => checkOutputBound(windows(8000, 16000), 'max_completion_tokens', 16001));
    expect(e.status).toBe(400);
    expect(e.param).toBe('max_completion_tokens');
    expect(e.message).toContain('16000');
    expect(() => checkOutputBound(windows(8000, 16000), 'max_tokens', 16000)).not.toThrow();
    // A deployment without a declared window could take anything: no check.
    expect(() => checkOutputBound(windows(8000, undefined), 'max_tokens', 1e9)).not.toThrow();
    expect(() => checkOutputBound(windows(8000), 'max_tokens', undefined)).not.toThrow();
  });

  it('reads the newer max_completion_tokens before max_tokens', () => {
    expect(chatOutputField(chat([], { max_tokens: 5, max_completion_tokens: 7 }))).toEqual({
      param: 'max_completion_tokens',
      value: 7,
    });
    expect(chatOutputField(chat([], { max_tokens: 5 }))).toEqual({ param: 'max_tokens', value: 5 });
  });

  it('legacy completions: best_of at least n, not streamed, and every candidate of every prompt counted', () => {
    expect(thrown(() => checkCompletionChoices({ model: 'm', prompt: 'x', n: 4, best_of: 2 })).param).toBe(
      'best_of',
    );
    expect(
      thrown(() => checkCompletionChoices({ model: 'm', prompt: 'x', best_of: 2, stream: true })).message,
    ).toContain('stream');
    expect(() => checkCompletionChoices({ model: 'm', prompt: 'x', n: 2, best_of: 5 })).not.toThrow();
    expect(completionSequences({ model: 'm', prompt: ['a', 'b', 'c'], n: 2, best_of: 5 })).toBe(15);
    expect(completionSequences({ model: 'm', prompt: 'a', n: 3 })).toBe(3);
    expect(completionSequences({ model: 'm', prompt: 'a' })).toBe(1);
  });
});
