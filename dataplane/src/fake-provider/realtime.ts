/**
 * The fake's Realtime API: a WebSocket at `/v1/realtime?model=` (and Azure's `/openai/v1/realtime`)
 * speaking OpenAI's GA event protocol, enough of it for a gateway to proxy and meter: session
 * events, conversation items, the audio buffer, responses with text (and audio when the session
 * asks for it) deltas and a `response.done` carrying usage split by modality, cancellation.
 * Faults apply per connection: `status`/`reset`/`hang`/`delay` at the handshake; `break-stream`
 * (the socket dies after N deltas), `stream-error` (an error event and a failed response),
 * `slow-stream` (delays between deltas) and `no-usage` to the responses.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { countTokens, fakeAnswer, isRecord } from './behaviour.ts';
import type { FaultBook } from './faults.ts';
import type { Fault, RecordedRequest } from './types.ts';

/** Decoded audio bytes per token: PCM16 at 24 kHz is about 10 tokens a second. */
export const FAKE_AUDIO_BYTES_PER_TOKEN = 4_800;

const id = (prefix: string): string => `${prefix}_${randomBytes(8).toString('hex')}`;

interface Item {
  text: string;
  audioBytes: number;
}

function httpError(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ error: { message, type: 'invalid_request_error', code: null } });
  socket.end(
    `HTTP/1.1 ${status} Error\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class FakeSession {
  private readonly session: Record<string, unknown>;
  private readonly items: Item[] = [];
  private bufferBytes = 0;
  private cancelled = new Set<string>();

  constructor(
    private readonly ws: WebSocket,
    model: string,
    private readonly fault: Fault | undefined,
  ) {
    this.session = {
      type: 'realtime',
      object: 'realtime.session',
      id: id('sess'),
      model,
      output_modalities: ['text'],
      max_output_tokens: 'inf',
    };
    this.send({ type: 'session.created', session: this.session });
    ws.on('message', (data) => void this.onEvent(String(data)));
  }

  private send(event: Record<string, unknown>): void {
    if (this.ws.readyState === this.ws.OPEN)
      this.ws.send(JSON.stringify({ event_id: id('event'), ...event }));
  }

  private error(message: string, clientEventId: unknown, code = 'invalid_value'): void {
    this.send({
      type: 'error',
      error: { type: 'invalid_request_error', code, message, param: null, event_id: clientEventId ?? null },
    });
  }

  private async onEvent(text: string): Promise<void> {
    let event: unknown;
    try {
      event = JSON.parse(text);
    } catch {
      return this.error('message is not JSON', null);
    }
    if (!isRecord(event) || typeof event.type !== 'string') return this.error('missing type', null);
    switch (event.type) {
      case 'session.update':
        if (isRecord(event.session)) Object.assign(this.session, event.session);
        return this.send({ type: 'session.updated', session: this.session });
      case 'conversation.item.create':
        return this.addItem(event.item, event.event_id);
      case 'input_audio_buffer.append':
        if (typeof event.audio !== 'string') return this.error('audio must be base64', event.event_id);
        this.bufferBytes += Buffer.from(event.audio, 'base64').length;
        return;
      case 'input_audio_buffer.commit': {
        const itemId = id('item');
        this.items.push({ text: '', audioBytes: this.bufferBytes });
        this.bufferBytes = 0;
        return this.send({ type: 'input_audio_buffer.committed', item_id: itemId, previous_item_id: null });
      }
      case 'response.create':
        return this.respond(isRecord(event.response) ? event.response : {});
      case 'response.cancel':
        if (typeof event.response_id === 'string') this.cancelled.add(event.response_id);
        return;
      default:
        return this.error(`unknown event type ${event.type}`, event.event_id);
    }
  }

  private addItem(item: unknown, clientEventId: unknown): void {
    if (!isRecord(item) || !Array.isArray(item.content))
      return this.error('item.content must be an array', clientEventId);
    let text = '';
    let audioBytes = 0;
    for (const part of item.content) {
      if (!isRecord(part)) continue;
      if (typeof part.text === 'string') text += part.text;
      if (typeof part.audio === 'string') audioBytes += Buffer.from(part.audio, 'base64').length;
    }
    this.items.push({ text, audioBytes });
    const added = { id: typeof item.id === 'string' ? item.id : id('item'), ...item, status: 'completed' };
    this.send({ type: 'conversation.item.added', previous_item_id: null, item: added });
    this.send({ type: 'conversation.item.done', previous_item_id: null, item: added });
  }

  private async respond(options: Record<string, unknown>): Promise<void> {
    const responseId = id('resp');
    const itemId = id('item');
    const modalities = (options.output_modalities ?? this.session.output_modalities) as unknown;
    const audio = Array.isArray(modalities) && modalities.includes('audio');
    const lastText = [...this.items].reverse().find((i) => i.text !== '')?.text ?? 'audio';
    const answer = fakeAnswer(lastText);
    const base = {
      object: 'realtime.response',
      id: responseId,
      output_modalities: audio ? ['audio'] : ['text'],
    };
    this.send({ type: 'response.created', response: { ...base, status: 'in_progress', output: [] } });
    this.send({
      type: 'response.output_item.added',
      response_id: responseId,
      output_index: 0,
      item: { id: itemId },
    });
    const words = answer.split(/(?<= )/);
    let sent = 0;
    let audioBytes = 0;
    for (const word of words) {
      if (this.fault?.type === 'slow-stream') await sleep(this.fault.chunkDelayMs);
      if (this.cancelled.has(responseId) || this.ws.readyState !== this.ws.OPEN) break;
      if (this.fault?.type === 'break-stream' && sent === this.fault.afterChunks)
        return void this.ws.terminate();
      if (this.fault?.type === 'stream-error' && sent === this.fault.afterChunks) {
        this.send({
          type: 'error',
          error: {
            type: 'server_error',
            code: 'server_error',
            message: this.fault.message ?? 'fake upstream failure',
          },
        });
        break;
      }
      const common = { response_id: responseId, item_id: itemId, output_index: 0, content_index: 0 };
      if (audio) {
        const chunk = Buffer.alloc(FAKE_AUDIO_BYTES_PER_TOKEN).toString('base64');
        audioBytes += FAKE_AUDIO_BYTES_PER_TOKEN;
        this.send({ type: 'response.output_audio.delta', ...common, delta: chunk });
        this.send({ type: 'response.output_audio_transcript.delta', ...common, delta: word });
      } else this.send({ type: 'response.output_text.delta', ...common, delta: word });
      sent++;
    }
    const produced = words.slice(0, sent).join('');
    const status = this.cancelled.has(responseId)
      ? 'cancelled'
      : this.fault?.type === 'stream-error'
        ? 'failed'
        : 'completed';
    if (status === 'completed')
      this.send({
        type: audio ? 'response.output_audio.done' : 'response.output_text.done',
        response_id: responseId,
        item_id: itemId,
        text: produced,
      });
    this.items.push({ text: '', audioBytes: 0 });
    const textIn = this.items.reduce((n, i) => n + countTokens(i.text), 0);
    const audioIn = this.items.reduce((n, i) => n + Math.ceil(i.audioBytes / FAKE_AUDIO_BYTES_PER_TOKEN), 0);
    const textOut = countTokens(produced);
    const audioOut = audioBytes / FAKE_AUDIO_BYTES_PER_TOKEN;
    // The answer joins the conversation the next response reads.
    this.items[this.items.length - 1] = { text: produced, audioBytes };
    const usage = {
      total_tokens: textIn + audioIn + textOut + audioOut,
      input_tokens: textIn + audioIn,
      output_tokens: textOut + audioOut,
      input_token_details: {
        text_tokens: textIn,
        audio_tokens: audioIn,
        image_tokens: 0,
        cached_tokens: 0,
        cached_tokens_details: { text_tokens: 0, audio_tokens: 0, image_tokens: 0 },
      },
      output_token_details: { text_tokens: textOut, audio_tokens: audioOut },
    };
    this.send({
      type: 'response.done',
      response: { ...base, status, ...(this.fault?.type === 'no-usage' ? {} : { usage }) },
    });
  }
}

export interface RealtimeState {
  requests: RecordedRequest[];
  faults: FaultBook;
}

/**
 * Serves upgrades on the fake's HTTP server; anything that is not the Realtime path is refused.
 * Returns what ends every open session (upgraded sockets keep a closing server waiting).
 */
export function attachRealtime(server: Server, state: RealtimeState): () => void {
  const wss = new WebSocketServer({ noServer: true });
  const pending = new Set<Duplex>();
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined);
    pending.add(socket);
    socket.once('close', () => pending.delete(socket));
    const url = new URL(req.url ?? '/', 'http://fake-provider');
    state.requests.push({
      method: 'GET',
      path: req.url ?? '/',
      headers: { ...req.headers },
      body: undefined,
    });
    if (url.pathname !== '/v1/realtime' && url.pathname !== '/openai/v1/realtime')
      return httpError(socket, 404, `no WebSocket at ${url.pathname}`);
    const auth = req.headers.authorization ?? req.headers['api-key'];
    if (auth === undefined) return httpError(socket, 401, 'missing credentials');
    const model = url.searchParams.get('model');
    if (!model) return httpError(socket, 400, 'missing model');
    const fault = state.faults.take({ path: req.url ?? '/', model, stream: true });
    if (fault?.type === 'reset') return void socket.destroy();
    if (fault?.type === 'hang') return;
    if (fault?.type === 'status')
      return httpError(socket, fault.status, fault.message ?? 'fake status fault');
    void (async () => {
      if (fault?.type === 'delay') await sleep(fault.ms);
      wss.handleUpgrade(req, socket, head, (ws) => new FakeSession(ws, model, fault));
    })();
  });
  return () => {
    for (const ws of wss.clients) ws.terminate();
    for (const socket of pending) socket.destroy();
  };
}
