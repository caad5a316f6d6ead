/**
 * One proxied Realtime session: client and upstream sockets joined, events passed through in
 * order, with the gateway's hands on the few that carry money or policy. `response.create`
 * waits for its budget hold (refused: an error event, nothing forwarded); `response.done`
 * settles that hold with the tokens it reports, priced at the deployment's text and audio
 * rates. The session ends on either side's close, the idle and duration limits, or shutdown.
 */
import type { RawData, WebSocket } from 'ws';
import type { GuardrailVerdictSummary } from '../accounting/usage.ts';
import type { Deployment, Snapshot } from '../config/snapshot.ts';
import { GatewayError } from '../errors.ts';
import type { RequestContext } from '../pipeline/context.ts';
import type { PipelineDeps } from '../pipeline/forward.ts';
import { chargeUnreserved } from '../pipeline/settlement.ts';
import { MAX_UNBOUNDED_OUTPUT_TOKENS } from '../accounting/reported-usage.ts';
import {
  outputLimits,
  realtimeCostUsd,
  responseEstimateUsd,
  splitUsage,
  type RealtimeUsage,
  type TokenSplit,
} from './cost.ts';
import {
  audioTokens,
  deltaTokens,
  errorEvent,
  eventId,
  isRecord,
  itemAudioTokens,
  itemTokens,
  parseEvent,
  type RealtimeEvent,
} from './events.ts';
import { DoneIds } from './done-ids.ts';
import { callerNow } from './caller.ts';
import { ClientFlow, MAX_REFUSALS_IN_A_ROW } from './client-flow.ts';
import { scannedChars, screenClientEvent } from './guard.ts';
import { scansText } from '../pipeline/guardrails/stage.ts';
import type { HolderScanBudget } from './scan-budget.ts';
import { countsAgainstClient, scanRefusalError } from './scan-share.ts';
import { recordBlocked, withVerdict } from './guard-record.ts';
import { holdResponse, responseContext, settleResponse } from './hold.ts';
import type { RealtimeLimits } from './limits.ts';
import { billedCeiling, outgrowsHold, SessionCap, statedCap, type Cap } from './output-cap.ts';
import { ownInput, responseInputTokens, SessionPrompt, type OwnInput } from './prompt-count.ts';
import { relay } from './relay.ts';
import { hasMcpTool, unmeteredReason, unmeteredSessionField } from './session-policy.ts';

export type SessionEnding =
  | 'client_closed'
  | 'upstream_closed'
  | 'idle'
  | 'expired'
  | 'shutdown'
  /** The key was removed or rotated, or lost the model, in a config reload. */
  | 'revoked'
  /** MAX_REFUSALS_IN_A_ROW client events in a row were refused. */
  | 'refused'
  | 'budget_exceeded';

export interface SessionSummary {
  ending: SessionEnding;
  responses: number;
  tokens: number;
  costUsd: number;
}

export interface SessionSetup {
  deps: PipelineDeps;
  /** The connect's context: the caller, its key and snapshot. */
  ctx: RequestContext;
  /** The serving config, which the caller is checked against again (caller.ts). */
  config(): Snapshot;
  client: WebSocket;
  upstream: WebSocket;
  deployment: Deployment;
  attempts: number;
  /** Gantry's model name, which the client sees; the upstream's name stays upstream. */
  model: string;
  /** A client secret's session configuration, applied before the client's first event. */
  initialSession?: Record<string, unknown> | undefined;
  limits: RealtimeLimits;
  /**
   * This session's holder's share of the key's guardrail scanning per minute on this pod
   * (scan-budget.ts): its own, or its client secret's, shared with that secret's other sessions.
   */
  scanBudget: HolderScanBudget;
  /** The holder as refusals name it: "this session", "this client secret's sessions". */
  scanHolder: string;
  shutdown: AbortSignal;
  onEnd(summary: SessionSummary): void;
}

/** A response from its hold to its settlement. */
interface Tracked {
  ctx: RequestContext;
  clientEventId: string | undefined;
  /** Input the hold assumed, charged with what was produced if the client leaves mid-response. */
  inputTokens: number;
  /** The instructions and tools among them (prompt-count.ts). */
  promptTokens: number;
  /** The audio among them, priced at the audio rate when the response is cut short. */
  inputAudioTokens: number;
  /** Output counted from the deltas relayed (text and audio), and the audio among it. */
  produced: number;
  producedAudio: number;
  /** The cap its hold assumed. */
  heldCap: Cap;
  /** The most output a report bills: the held cap once `response.created` echoes it (output-cap.ts). */
  maxOutputTokens: number;
  /** `conversation: "none"`: its answer joins no conversation, so it says nothing of the next one's input. */
  outOfBand: boolean;
  /** The hold is being made (a server-started response): settle after it. */
  holding?: Promise<void>;
}

const OPEN = 1;
/** Close codes a server may send; anything else (1005, 1006, 1015) becomes 1011. */
const sendable = (code: number): number =>
  code === 1000 || code === 1001 || code === 1008 || code === 1011 || (code >= 3000 && code <= 4999)
    ? code
    : 1011;

export class RealtimeSession {
  private readonly s: SessionSetup;
  /** Holds waiting for the upstream's `response.created`, oldest first. */
  private readonly queued: Tracked[] = [];
  private readonly live = new Map<string, Tracked>();
  /** Client events are handled one after another: a held `response.create` keeps its place. */
  private clientChain: Promise<void> = Promise.resolve();
  /** Settlements run in order beside the event flow, which they never delay. */
  private accounting: Promise<void> = Promise.resolve();
  /** What the last response read (the conversation so far) plus what was added since. */
  private conversationTokens = 0;
  private addedTokens = 0;
  /** The audio among those two counts. */
  private conversationAudio = 0;
  private addedAudio = 0;
  /** The instructions and tools counted for the last response: its reported input includes them. */
  private conversationPrompt = 0;
  private readonly cap = new SessionCap();
  private readonly prompt = new SessionPrompt();
  private readonly done = new DoneIds();
  /** The upstream said the session reached its own duration limit: its close is no failure. */
  private upstreamExpired = false;
  private readonly totals = { responses: 0, tokens: 0, costUsd: 0 };
  /** Dollars of settlements queued behind `accounting`, not yet handed to settle() (which tracks its own). */
  private queuedUsd = 0;
  private ended = false;
  private idleTimer: NodeJS.Timeout | undefined;
  private lifeTimer: NodeJS.Timeout | undefined;
  private readonly onShutdown = () => this.end('shutdown', 1001, 'gateway shutting down');
  /** The caller as the config has it now: the connect's, refreshed by `recheck`. */
  private caller: RequestContext;
  /** Reading of the client: paused by backlogs either way and by its queue (client-flow.ts). */
  readonly flow: ClientFlow;
  /** Guardrail findings (flagged, redacted) in text since the last response, recorded on the next. */
  private verdict: GuardrailVerdictSummary | undefined;

  constructor(setup: SessionSetup) {
    this.s = setup;
    this.caller = setup.ctx;
    this.flow = new ClientFlow(setup.client);
  }

  start(): void {
    const { client, upstream, limits, shutdown } = this.s;
    client.on('message', (data, isBinary) => {
      // Ended (the close frame sent, its answer awaited): what still arrives is dropped unread.
      if (this.ended) return;
      this.touch();
      const text = String(data);
      this.flow.arrived(text.length);
      this.clientChain = this.clientChain
        .then(async () => {
          if (await this.flow.handled(text.length, () => this.fromClient(isBinary ? undefined : text)))
            this.tooManyRefusals();
        })
        .catch((err: unknown) => this.s.ctx.log.warn({ err: String(err) }, 'realtime client event failed'));
    });
    upstream.on('message', (data: RawData) => {
      // Ended: every hold was settled, and the upstream's close is awaited. A late
      // `response.created` took a fresh hold nothing settled (held 15 minutes, its rate ticket
      // leaked), and a late `response.done` was charged after the session was reported.
      if (this.ended) return;
      this.touch();
      this.fromUpstream(String(data));
    });
    client.on('close', (code) => this.end('client_closed', code, ''));
    upstream.on('close', (code, reason) => this.end('upstream_closed', code, String(reason)));
    // Errors are followed by 'close', which ends the session.
    client.on('error', () => undefined);
    upstream.on('error', (err) => this.s.ctx.log.warn({ err: err.message }, 'realtime upstream error'));
    this.idleTimer = setTimeout(() => this.limitReached('idle'), limits.idleTimeoutMs);
    this.lifeTimer = setTimeout(() => this.limitReached('expired'), limits.maxSessionMs);
    if (shutdown.aborted) this.onShutdown();
    else shutdown.addEventListener('abort', this.onShutdown, { once: true });
    const initial = this.s.initialSession;
    if (initial && Object.keys(initial).length > 0) {
      const id = eventId();
      this.cap.sent(id, initial);
      this.prompt.sent(id, initial);
      this.toUpstream(
        JSON.stringify({ type: 'session.update', event_id: id, session: { type: 'realtime', ...initial } }),
      );
    }
    upstream.resume();
  }

  private touch(): void {
    this.idleTimer?.refresh();
  }

  private toClient(text: string): void {
    relay(this.s.upstream, this.s.client, text);
  }

  private toUpstream(text: string): void {
    this.flow.forwarded();
    relay(this.flow.reader('upstream-backlog'), this.s.upstream, text);
  }

  /** An error event; a client that does not read them stops being read (client-flow.ts). */
  private refuse(error: GatewayError, clientEventId?: unknown): void {
    relay(this.flow.reader('own-backlog'), this.s.client, errorEvent(error, clientEventId));
  }

  private tooManyRefusals(): void {
    const message = `${MAX_REFUSALS_IN_A_ROW} events in a row were refused; the session is closed`;
    this.refuse(new GatewayError('invalid_request_error', message));
    this.end('refused', 1008, message);
  }

  /**
   * The caller checked against the serving config (before each response and on reloads): gone,
   * the session ends with 1008; else later holds and guardrails use the key and prices as they are.
   */
  recheck(): boolean {
    if (this.ended) return false;
    const now = callerNow(this.s.config(), this.caller.key, this.s.model, this.s.deployment);
    if (!now.ok) {
      this.refuse(new GatewayError('authentication_error', `${now.reason}; the session is closed`));
      this.end('revoked', 1008, now.reason);
      return false;
    }
    this.caller = { ...this.caller, key: now.key, tenant: now.tenant, snapshot: now.snapshot };
    this.s.deployment = now.deployment;
    return true;
  }

  private async fromClient(text: string | undefined): Promise<void> {
    if (this.ended) return;
    const event = text === undefined ? undefined : parseEvent(text);
    if (!event) {
      this.refuse(
        new GatewayError(
          'invalid_request_error',
          'every message must be a JSON text event with a string "type" (binary frames are not part of the Realtime protocol)',
        ),
      );
      return;
    }
    // Text no check would read costs no scanning: it is neither counted nor refused.
    const chars = scansText(this.caller) ? scannedChars(event) : 0;
    if (chars > 0) {
      const taken = this.s.scanBudget.take(chars, Date.now());
      if (taken.verdict !== 'ok') {
        if (!countsAgainstClient(taken.verdict)) this.flow.excused();
        const error = scanRefusalError({
          ...taken,
          verdict: taken.verdict,
          chars,
          holder: this.s.scanHolder,
        });
        return this.refuse(error, event.event_id);
      }
    }
    const screened = screenClientEvent(this.caller, event, this.s.model);
    if (!screened.ok) {
      recordBlocked(this.s.deps, this.responseCtx(), screened.error, screened.verdict);
      return this.refuse(screened.error, event.event_id);
    }
    this.verdict = withVerdict(this.verdict, screened.verdict);
    if (screened.rewritten) text = JSON.stringify(event);
    switch (event.type) {
      case 'session.update':
        return this.sessionUpdate(event);
      // The beta's transcription sessions: billed apart from responses, never settled here.
      case 'transcription_session.update':
        return this.refuse(
          new GatewayError(
            'invalid_request_error',
            'transcription_session.update: transcription sessions are not served; the gateway cannot meter them',
          ),
          event.event_id,
        );
      case 'input_audio_buffer.append': {
        const audio = audioTokens(event.audio);
        this.addedTokens += audio;
        this.addedAudio += audio;
        break;
      }
      case 'conversation.item.create':
        this.addedTokens += itemTokens(event.item);
        this.addedAudio += itemAudioTokens(event.item);
        break;
      case 'response.create':
        return this.responseCreate(event);
    }
    this.toUpstream(text!);
  }

  /**
   * The model is chosen at connect (and priced by it): a session may not switch to another,
   * nor turn on what the gateway cannot meter (as minting a secret refuses it).
   */
  private sessionUpdate(event: RealtimeEvent): void {
    const session = isRecord(event.session) ? event.session : undefined;
    const unmetered = session && unmeteredSessionField(session);
    if (unmetered !== undefined) {
      const param = `session.${unmetered}`;
      this.refuse(
        new GatewayError('invalid_request_error', `${param}: ${unmeteredReason(unmetered)}`, { param }),
        event.event_id,
      );
      return;
    }
    const model = session?.model;
    if (model !== undefined && model !== this.s.model) {
      this.refuse(
        new GatewayError(
          'invalid_request_error',
          `session.model: this session serves ${this.s.model}; open a new session for another model`,
          { param: 'session.model' },
        ),
        event.event_id,
      );
      return;
    }
    if (session && model !== undefined) session.model = this.s.deployment.target.upstreamModel;
    // Its cap counts once the upstream confirms it; an id so that a refusal can name it.
    if (typeof event.event_id !== 'string') event.event_id = eventId();
    this.cap.sent(event.event_id as string, session);
    this.prompt.sent(event.event_id as string, session);
    this.toUpstream(JSON.stringify(event));
  }

  private async responseCreate(event: RealtimeEvent): Promise<void> {
    const response = isRecord(event.response) ? event.response : {};
    if (hasMcpTool(response.tools)) {
      const param = 'response.tools';
      this.refuse(
        new GatewayError('invalid_request_error', `${param}: ${unmeteredReason(param)}`, { param }),
        event.event_id,
      );
      return;
    }
    if (!this.recheck()) return;
    const heldCap = statedCap(response) ?? this.cap.forHold();
    const tracked = this.tracked(
      heldCap,
      MAX_UNBOUNDED_OUTPUT_TOKENS,
      response.conversation === 'none',
      this.prompt.forResponse(response),
      ownInput(response),
    );
    try {
      await this.hold(tracked);
    } catch (err) {
      this.refuse(holdError(err), event.event_id);
      return;
    }
    if (this.ended) {
      void this.settle(tracked, 499, 0, 0, 0);
      return;
    }
    // An id of our own when the client sent none, so an upstream error can name this event.
    if (typeof event.event_id !== 'string') event.event_id = eventId();
    tracked.clientEventId = event.event_id as string;
    this.queued.push(tracked);
    this.toUpstream(JSON.stringify(event));
  }

  private responseCtx(): RequestContext {
    const ctx = responseContext(this.caller);
    ctx.usage = { endpoint: 'realtime', requestedModel: this.s.model, stream: true };
    return ctx;
  }

  /** A response's context, carrying the guardrail findings of the text it reads. */
  private heldCtx(): RequestContext {
    const ctx = this.responseCtx();
    ctx.usage.guardrails = this.verdict;
    this.verdict = undefined;
    return ctx;
  }

  private fromUpstream(text: string): void {
    const event = parseEvent(text);
    if (!event) return this.toClient(text);
    switch (event.type) {
      case 'session.created':
      case 'session.updated':
        this.cap.confirmed(event.session, event.type === 'session.updated');
        this.prompt.confirmed(event.session, event.type === 'session.updated');
        // The client asked for Gantry's model name; the upstream's is an internal detail.
        if (isRecord(event.session) && typeof event.session.model === 'string') {
          event.session.model = this.s.model;
          return this.toClient(JSON.stringify(event));
        }
        break;
      case 'response.created':
        this.responseCreated(event);
        break;
      case 'response.done':
        this.responseDone(event);
        break;
      case 'error':
        this.upstreamError(event);
        break;
      default: {
        const produced = deltaTokens(event);
        if (produced.text + produced.audio > 0 && typeof event.response_id === 'string') {
          const tracked = this.live.get(event.response_id);
          if (tracked) {
            tracked.produced += produced.text + produced.audio;
            tracked.producedAudio += produced.audio;
          }
        }
      }
    }
    this.toClient(text);
  }

  private responseCreated(event: RealtimeEvent): void {
    const id =
      isRecord(event.response) && typeof event.response.id === 'string' ? event.response.id : undefined;
    if (id === undefined || this.live.has(id) || this.done.has(id)) return;
    const queued = this.queued[0];
    if (queued && !outgrowsHold(queued.heldCap, event.response)) {
      this.queued.shift();
      queued.maxOutputTokens = billedCeiling(queued.heldCap, event.response, MAX_UNBOUNDED_OUTPUT_TOKENS);
      this.live.set(id, queued);
      return;
    }
    // Started by the upstream itself (server voice activity detection), or running under a
    // looser cap than the queued hold (so not its response; that one stays queued for its own
    // response.created or error): held now, and cancelled at once when the key cannot cover it.
    const heldCap = this.cap.forHold();
    const tracked = this.tracked(
      heldCap,
      billedCeiling(heldCap, event.response, MAX_UNBOUNDED_OUTPUT_TOKENS),
      false,
      this.prompt.forResponse(event.response),
    );
    tracked.holding = this.hold(tracked).catch((err: unknown) => this.serverResponseRefused(id, err));
    this.live.set(id, tracked);
  }

  /** A response about to start over the conversation so far (or its own input), held under the current key. */
  private tracked(
    heldCap: Cap,
    maxOutputTokens: number,
    outOfBand: boolean,
    prompt: number,
    own?: OwnInput,
  ): Tracked {
    const conversationAudio = this.conversationAudio + this.addedAudio;
    return {
      ctx: this.heldCtx(),
      clientEventId: undefined,
      inputTokens: responseInputTokens({
        conversation: this.conversationTokens,
        conversationPrompt: this.conversationPrompt,
        added: this.addedTokens,
        prompt,
        own,
      }),
      promptTokens: prompt,
      inputAudioTokens:
        own === undefined
          ? conversationAudio
          : own.audio + (own.referencesConversation ? conversationAudio : 0),
      produced: 0,
      producedAudio: 0,
      heldCap,
      maxOutputTokens,
      outOfBand,
    };
  }

  /** Holds `tracked`'s input and its cap's worth of output on the key's budget. */
  private hold(tracked: Tracked): Promise<void> {
    const held = outputLimits([tracked.heldCap]).held;
    const estimate = responseEstimateUsd(this.s.deployment.pricing, tracked.inputTokens, held);
    return holdResponse(this.s.deps, tracked.ctx, estimate, tracked.inputTokens + held);
  }

  /**
   * A server-started response the key cannot hold is cancelled. Past its budget the session
   * ends too: server VAD would start the next turn regardless, and each one's output before
   * its cancel landed was charged unheld, turn after turn past the limit.
   */
  private serverResponseRefused(id: string, err: unknown): void {
    const error = holdError(err);
    this.toUpstream(JSON.stringify({ type: 'response.cancel', event_id: eventId(), response_id: id }));
    this.refuse(error);
    if (error.type === 'budget_exceeded')
      this.end('budget_exceeded', 1008, 'budget exceeded: the key cannot pay for the next response');
  }

  private responseDone(event: RealtimeEvent): void {
    const response = isRecord(event.response) ? event.response : {};
    const id = typeof response.id === 'string' ? response.id : undefined;
    // Without an id, or for one already settled, it names no response of ours: a queued hold
    // belongs to another. An id never seen started is the oldest queued one's.
    if (id === undefined || this.done.has(id)) return;
    const tracked = this.live.get(id) ?? this.queued.shift();
    this.live.delete(id);
    this.done.add(id);
    if (!tracked) return;
    const usage = isRecord(response.usage) ? (response.usage as RealtimeUsage) : undefined;
    const split = splitUsage(usage, {
      inputTokens: tracked.inputTokens,
      producedTokens: tracked.produced,
      maxOutputTokens: tracked.maxOutputTokens,
    });
    const input = split.textIn + split.audioIn + split.cachedIn;
    const output = split.textOut + split.audioOut;
    // The next response reads the whole conversation again, this answer included; an
    // out-of-band one read only its own input and added nothing.
    if (!tracked.outOfBand) {
      this.conversationTokens = input + output;
      this.conversationPrompt = tracked.promptTokens;
      this.addedTokens = 0;
      this.conversationAudio = split.audioIn + split.audioOut;
      this.addedAudio = 0;
    }
    const cost = realtimeCostUsd(this.s.deployment.pricing, split);
    void this.settle(tracked, 200, input, output, cost);
  }

  /** An upstream error naming a `response.create` we held: that response never starts. */
  private upstreamError(event: RealtimeEvent): void {
    const error = isRecord(event.error) ? event.error : {};
    if (error.code === 'session_expired') this.upstreamExpired = true;
    const ref = error.event_id;
    if (typeof ref !== 'string') return;
    this.cap.refused(ref);
    this.prompt.refused(ref);
    const at = this.queued.findIndex((t) => t.clientEventId === ref);
    if (at === -1) return;
    const [tracked] = this.queued.splice(at, 1);
    void this.settle(tracked!, 400, 0, 0, 0);
  }

  private settle(
    tracked: Tracked,
    status: number,
    input: number,
    output: number,
    costUsd: number,
  ): Promise<void> {
    this.totals.responses++;
    this.totals.tokens += input + output;
    this.totals.costUsd += costUsd;
    this.queuedUsd += costUsd;
    const { deps, deployment, attempts } = this.s;
    this.accounting = this.accounting.then(async () => {
      await tracked.holding;
      await chargeUnheld(deps, tracked.ctx, costUsd);
      this.queuedUsd -= costUsd;
      await settleResponse(deps, tracked.ctx, {
        status,
        errorType: status === 200 ? undefined : status === 499 ? 'client_closed_request' : 'upstream_error',
        deployment,
        attempts,
        promptTokens: input,
        completionTokens: output,
        costUsd,
      });
    });
    return this.accounting;
  }

  /**
   * What the session would still charge if it ended now: its settlements not yet handed to the
   * stores, and each response under way at what a client leaving would pay for it (end()).
   */
  get owedUsd(): number {
    let usd = this.queuedUsd;
    for (const t of [...this.live.values(), ...this.queued])
      usd += realtimeCostUsd(this.s.deployment.pricing, cutShort(t));
    return usd;
  }

  private limitReached(ending: 'idle' | 'expired'): void {
    const seconds = Math.round(
      (ending === 'idle' ? this.s.limits.idleTimeoutMs : this.s.limits.maxSessionMs) / 1000,
    );
    const message =
      ending === 'idle'
        ? `session closed after ${seconds}s without a message`
        : `session closed at its ${seconds}s duration limit`;
    this.refuse(new GatewayError('request_timeout', message));
    this.end(ending, 1008, message);
  }

  /** Closes both sides once, settles what is still open, and reports the session. */
  private end(ending: SessionEnding, code: number, reason: string): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.idleTimer);
    clearTimeout(this.lifeTimer);
    this.s.shutdown.removeEventListener('abort', this.onShutdown);
    const { client, upstream, deployment } = this.s;
    if (ending === 'upstream_closed') client.close(sendable(code), reason.slice(0, 120));
    else if (ending !== 'client_closed') client.close(sendable(code), reason.slice(0, 120));
    if (upstream.readyState === OPEN) upstream.close(1000);
    else upstream.terminate();
    // Responses cut short: the client that left pays for what was produced (as on streams);
    // one the upstream broke is not charged. The upstream ending the session on purpose (its
    // own duration limit, a normal close) is no fault: charged as the gateway's own limit is.
    const clientLeft = ending !== 'upstream_closed' || this.upstreamExpired || code === 1000 || code === 1001;
    for (const tracked of this.live.values()) {
      const cost = clientLeft ? realtimeCostUsd(deployment.pricing, cutShort(tracked)) : 0;
      void this.settle(
        tracked,
        clientLeft ? 499 : 502,
        clientLeft ? tracked.inputTokens : 0,
        clientLeft ? tracked.produced : 0,
        cost,
      );
    }
    // Queued holds were forwarded (a hold is queued as its create is sent): the upstream may
    // have read their input already, so the client that left pays for it, as for a live one.
    for (const tracked of this.queued) {
      const cost = clientLeft ? realtimeCostUsd(deployment.pricing, cutShort(tracked)) : 0;
      void this.settle(tracked, clientLeft ? 499 : 502, clientLeft ? tracked.inputTokens : 0, 0, cost);
    }
    this.live.clear();
    this.queued.length = 0;
    void this.clientChain.then(() => this.accounting).finally(() => this.s.onEnd({ ending, ...this.totals }));
  }
}

/**
 * A response cut short, by the gateway's own count: its input and what it produced so far, audio
 * apart from text so each is priced at its own rate (all of it was priced as text, and 30 s of
 * audio in with 10 s out was charged $0.0028 instead of $0.016).
 */
function cutShort(tracked: Tracked): TokenSplit {
  const audioIn = Math.min(tracked.inputAudioTokens, tracked.inputTokens);
  return {
    textIn: tracked.inputTokens - audioIn,
    audioIn,
    cachedIn: 0,
    textOut: tracked.produced - tracked.producedAudio,
    audioOut: tracked.producedAudio,
  };
}

/**
 * A server-started response refused its hold (budget, rate limit, or a store that was down)
 * still used tokens until its cancel landed: charged without a reservation, journaled like
 * any settlement when the store cannot take it. Until then `queuedUsd` counts it as owed.
 */
async function chargeUnheld(deps: PipelineDeps, ctx: RequestContext, costUsd: number): Promise<void> {
  const budget = ctx.key.spec.budget;
  if (!budget || costUsd <= 0 || ctx.admission?.reservation) return;
  await chargeUnreserved(deps, ctx, budget, costUsd);
}

/** A hold's failure as the client is told it. */
const holdError = (err: unknown): GatewayError =>
  err instanceof GatewayError ? err : new GatewayError('internal_error', 'hold failed');
