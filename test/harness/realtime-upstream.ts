/**
 * An OpenAI-like Realtime upstream for the money tests, doing what the fake provider does not
 * (and what OpenAI does): a `session.update` with a voice it does not know is an `error` event
 * naming the update, the session left unchanged; `response.created` echoes the
 * `max_output_tokens` the response runs under, and the output honours it; answers are long
 * function calls; with server VAD a committed buffer starts a response of the upstream's own,
 * during which a client's `response.create` is refused (`conversation_already_has_active_response`);
 * `response.cancel` ends a response with what it produced. The test can also send any event
 * and close the socket itself (duplicates, the upstream's own session expiry), and may stall
 * responses until it lets them finish, so nothing waits on a guessed time.
 */
import { createServer, type Server } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';

export interface UpstreamOptions {
  /** Characters of function-call arguments an uncapped response streams. */
  argsChars?: number;
  /** Output tokens an uncapped response reports. */
  outputTokens?: number;
  /**
   * Server VAD: `input_audio_buffer.commit` starts a response of the upstream's own, finished by
   * the client's next event. `'racing'`: it starts just as that next event arrives, before it is
   * handled (a client's `response.create` sent with the commit then meets a response in progress,
   * its hold already queued at the gateway), and finishes on the event after.
   */
  vad?: boolean | 'racing';
  /** Responses the client starts wait for `finish()` after their first delta. */
  stall?: boolean;
}

const CHUNK = 1_000;
const VOICES = ['alloy', 'marin'];
type Json = Record<string, unknown>;

interface Active {
  id: string;
  cap: number | 'inf';
  outOfBand: boolean;
  /** Argument characters still to stream after the first chunk. */
  args: string;
  sent: number;
}

export class UpstreamSession {
  private n = 0;
  readonly session: Json = {
    type: 'realtime',
    object: 'realtime.session',
    model: 'up',
    voice: 'alloy',
    max_output_tokens: 'inf',
  };
  /** Tokens of the conversation so far (items and answers). */
  private conversation = 0;
  private active: Active | undefined;
  private vadDue = false;
  private readonly finishers: (() => void)[] = [];
  /** Runs once when the next `response.create` arrives, before it is answered. */
  beforeRespond: (() => void) | undefined;

  constructor(
    private readonly ws: WebSocket,
    private readonly opts: UpstreamOptions,
  ) {
    this.send({ type: 'session.created', session: this.session });
    ws.on('message', (data) => this.onEvent(JSON.parse(String(data)) as Json));
  }

  send(event: Json): void {
    if (this.ws.readyState === this.ws.OPEN)
      this.ws.send(JSON.stringify({ event_id: `ev_${this.n++}`, ...event }));
  }

  close(code: number, reason: string): void {
    this.ws.close(code, reason);
  }

  /** Lets the stalled response finish. */
  finish(): void {
    this.finishers.shift()?.();
  }

  private error(code: string, message: string, eventId: unknown, param: string | null = null): void {
    this.send({
      type: 'error',
      error: { type: 'invalid_request_error', code, message, param, event_id: eventId ?? null },
    });
  }

  private onEvent(e: Json): void {
    // A racing VAD response outlives the event it raced, running until the one after.
    const raced = this.vadDue;
    if (raced) {
      this.vadDue = false;
      this.start(`resp_vad_${this.n++}`, {});
    }
    const serverStarted = !raced && this.active && this.active.id.startsWith('resp_vad');
    this.handle(e);
    // A server-started response runs until the client's next event has been answered.
    if (serverStarted && e.type !== 'response.cancel' && this.active) this.complete(this.active, 'completed');
  }

  private handle(e: Json): void {
    switch (e.type) {
      case 'session.update': {
        const s = (e.session ?? {}) as Json;
        if (s.voice !== undefined && !VOICES.includes(String(s.voice)))
          return this.error(
            'invalid_value',
            `Invalid value: '${String(s.voice)}'`,
            e.event_id,
            'session.voice',
          );
        Object.assign(this.session, s);
        return this.send({ type: 'session.updated', session: this.session });
      }
      case 'conversation.item.create': {
        const item = (e.item ?? {}) as Json;
        this.conversation += Math.ceil(JSON.stringify(item.content ?? []).length / 4);
        return this.send({
          type: 'conversation.item.done',
          previous_item_id: null,
          item: { id: `item_${this.n++}`, ...item },
        });
      }
      case 'input_audio_buffer.commit':
        this.send({
          type: 'input_audio_buffer.committed',
          item_id: `item_${this.n++}`,
          previous_item_id: null,
        });
        if (this.opts.vad === 'racing') this.vadDue = true;
        else if (this.opts.vad) this.start(`resp_vad_${this.n++}`, {});
        return;
      case 'response.create':
        if (this.active)
          return this.error(
            'conversation_already_has_active_response',
            'Conversation already has an active response',
            e.event_id,
          );
        this.beforeRespond?.();
        this.beforeRespond = undefined;
        return this.respond(`resp_${this.n++}`, (e.response ?? {}) as Json);
      case 'response.cancel':
        if (this.active && this.active.id === e.response_id) this.complete(this.active, 'cancelled');
        return;
    }
  }

  private start(id: string, response: Json): Active {
    const cap = (response.max_output_tokens ?? this.session.max_output_tokens) as number | 'inf';
    const outOfBand = response.conversation === 'none';
    const full = JSON.stringify({ essay: 'x'.repeat(this.opts.argsChars ?? 16_000) });
    const args = cap === 'inf' ? full : full.slice(0, cap * 4);
    const active: Active = { id, cap, outOfBand, args, sent: 0 };
    this.active = active;
    this.send({
      type: 'response.created',
      response: {
        id,
        object: 'realtime.response',
        status: 'in_progress',
        max_output_tokens: cap,
        conversation_id: outOfBand ? null : 'conv_1',
        output: [],
      },
    });
    this.delta(active, args.slice(0, CHUNK));
    return active;
  }

  private respond(id: string, response: Json): void {
    const active = this.start(id, response);
    if (this.opts.stall) this.finishers.push(() => this.complete(active, 'completed'));
    else this.complete(active, 'completed');
  }

  private delta(a: Active, text: string): void {
    if (text === '') return;
    a.sent += text.length;
    this.send({
      type: 'response.function_call_arguments.delta',
      response_id: a.id,
      item_id: 'it',
      output_index: 0,
      call_id: 'c1',
      delta: text,
    });
  }

  private complete(a: Active, status: 'completed' | 'cancelled'): void {
    if (this.active !== a) return;
    this.active = undefined;
    if (status === 'completed') {
      for (let i = a.sent; i < a.args.length; i += CHUNK) this.delta(a, a.args.slice(i, i + CHUNK));
      this.send({
        type: 'response.function_call_arguments.done',
        response_id: a.id,
        item_id: 'it',
        output_index: 0,
        call_id: 'c1',
        name: 'f',
        arguments: a.args,
      });
    }
    const full = this.opts.outputTokens ?? 4_000;
    const output =
      status === 'cancelled' ? Math.ceil(a.sent / 4) : a.cap === 'inf' ? full : Math.min(full, a.cap);
    // An out-of-band response reads only its own short input and joins no conversation.
    const input = a.outOfBand ? 5 : this.conversation;
    if (!a.outOfBand) this.conversation += output;
    this.send({
      type: 'response.done',
      response: {
        id: a.id,
        object: 'realtime.response',
        status,
        max_output_tokens: a.cap,
        usage: {
          total_tokens: input + output,
          input_tokens: input,
          output_tokens: output,
          input_token_details: { text_tokens: input, audio_tokens: 0, cached_tokens: 0 },
          output_token_details: { text_tokens: output, audio_tokens: 0 },
        },
      },
    });
  }
}

export interface RealtimeUpstream {
  /** For a deployment's `baseUrl`. */
  baseUrl: string;
  /** The next session a gateway opens here. */
  nextSession(): Promise<UpstreamSession>;
  close(): Promise<void>;
}

export async function startRealtimeUpstream(opts: UpstreamOptions = {}): Promise<RealtimeUpstream> {
  const http: Server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server: http });
  const opened: UpstreamSession[] = [];
  const waiting: ((s: UpstreamSession) => void)[] = [];
  wss.on('connection', (ws) => {
    const s = new UpstreamSession(ws, opts);
    const w = waiting.shift();
    if (w) return w(s);
    // Unclaimed, it waits for the test that opened it, until it closes.
    opened.push(s);
    ws.once('close', () => opened.includes(s) && opened.splice(opened.indexOf(s), 1));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as { port: number };
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    nextSession: () => {
      const s = opened.shift();
      return s ? Promise.resolve(s) : new Promise((resolve) => waiting.push(resolve));
    },
    async close() {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
