/**
 * A small OTLP/HTTP JSON trace exporter: one server span per request, batched and posted to
 * `<endpoint>/v1/traces`. Built only when an OTLP endpoint is configured, so a gateway
 * without one does no tracing work at all. Export never blocks or fails a request: spans
 * that cannot be sent are dropped (and counted).
 */
import { randomBytes } from 'node:crypto';
import { isSampled, type TraceContext } from './trace-context.ts';

export type AttributeValue = string | number | boolean;

export interface FinishedSpan {
  trace: TraceContext;
  name: string;
  startMs: number;
  endMs: number;
  attributes: Readonly<Record<string, AttributeValue | undefined>>;
  error: boolean;
}

export interface OtlpOptions {
  /** Full URL spans are posted to (…/v1/traces). */
  url: string;
  headers?: Readonly<Record<string, string>>;
  serviceName?: string;
  serviceVersion?: string;
  /** How long a span may wait for its batch. */
  flushMs?: number;
  /** A batch this large is sent at once. */
  batchSize?: number;
  /** Spans kept while the collector is slow; past this, new spans are dropped. */
  maxQueue?: number;
  onDrop?: (count: number, reason: string) => void;
}

/** Which OTLP endpoint the environment names, if any (standard OTEL_* variables honoured). */
export function otlpFromEnv(env: Readonly<Record<string, string | undefined>>): OtlpOptions | undefined {
  const full = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = env.GANTRY_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const url = full || (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (!url) return undefined;
  return {
    url,
    headers: parseHeaderList(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS),
    serviceName: env.OTEL_SERVICE_NAME || 'gantry',
  };
}

/** `k1=v1,k2=v2` with percent-encoded values, as the OTLP exporter spec writes headers. */
function parseHeaderList(list: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of (list ?? '').split(',')) {
    const eq = item.indexOf('=');
    if (eq <= 0) continue;
    out[item.slice(0, eq).trim().toLowerCase()] = decodeURIComponent(item.slice(eq + 1).trim());
  }
  return out;
}

const SPAN_KIND_SERVER = 2;
const STATUS_OK = 1;
const STATUS_ERROR = 2;

export class OtlpTracer {
  private queue: FinishedSpan[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> = Promise.resolve();
  private readonly flushMs: number;
  private readonly batchSize: number;
  private readonly maxQueue: number;

  constructor(private readonly opts: OtlpOptions) {
    this.flushMs = opts.flushMs ?? 1_000;
    this.batchSize = opts.batchSize ?? 512;
    this.maxQueue = opts.maxQueue ?? 8_192;
  }

  /**
   * The trace this request records under: the caller's trace with a new span of ours, or a
   * new trace. A caller that did not sample its trace is followed (parent-based sampling):
   * no span is recorded, and its context is passed on untouched.
   */
  begin(incoming: TraceContext | undefined): TraceContext {
    if (incoming && !isSampled(incoming)) return incoming;
    const spanId = randomBytes(8).toString('hex');
    if (incoming) return { ...incoming, spanId };
    return {
      traceId: randomBytes(16).toString('hex'),
      parentId: undefined,
      spanId,
      flags: 1,
      state: undefined,
    };
  }

  end(span: FinishedSpan): void {
    if (span.trace.spanId === undefined) return;
    if (this.queue.length >= this.maxQueue) {
      this.opts.onDrop?.(1, 'queue full');
      return;
    }
    this.queue.push(span);
    if (this.queue.length >= this.batchSize) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
  }

  /** Send what is queued; resolves when it has been sent (or given up on). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return this.sending;
    this.sending = this.sending.then(() => this.post(batch));
    return this.sending;
  }

  async close(): Promise<void> {
    await this.flush();
  }

  private async post(batch: FinishedSpan[]): Promise<void> {
    try {
      const res = await fetch(this.opts.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...this.opts.headers },
        body: JSON.stringify(this.encode(batch)),
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (!res.ok) this.opts.onDrop?.(batch.length, `collector answered ${res.status}`);
    } catch (err) {
      this.opts.onDrop?.(batch.length, (err as Error).message);
    }
  }

  /** OTLP/JSON: ids in hex, times as decimal nanosecond strings, enums as numbers. */
  private encode(batch: FinishedSpan[]) {
    const resource = { service: this.opts.serviceName ?? 'gantry', version: this.opts.serviceVersion };
    return {
      resourceSpans: [
        {
          resource: {
            attributes: attributes({ 'service.name': resource.service, 'service.version': resource.version }),
          },
          scopeSpans: [
            {
              scope: { name: 'gantry' },
              spans: batch.map((s) => ({
                traceId: s.trace.traceId,
                spanId: s.trace.spanId,
                ...(s.trace.parentId !== undefined && { parentSpanId: s.trace.parentId }),
                ...(s.trace.state !== undefined && { traceState: s.trace.state }),
                name: s.name,
                kind: SPAN_KIND_SERVER,
                startTimeUnixNano: nanos(s.startMs),
                endTimeUnixNano: nanos(s.endMs),
                attributes: attributes(s.attributes),
                status: { code: s.error ? STATUS_ERROR : STATUS_OK },
              })),
            },
          ],
        },
      ],
    };
  }
}

const nanos = (ms: number): string => (BigInt(Math.round(ms * 1_000)) * 1_000n).toString();

function attributes(attrs: Readonly<Record<string, AttributeValue | undefined>>) {
  const out: { key: string; value: Record<string, AttributeValue> }[] = [];
  for (const [key, v] of Object.entries(attrs)) {
    if (v === undefined) continue;
    const value: Record<string, AttributeValue> =
      typeof v === 'string'
        ? { stringValue: v }
        : typeof v === 'boolean'
          ? { boolValue: v }
          : Number.isInteger(v)
            ? { intValue: v }
            : { doubleValue: v };
    out.push({ key, value });
  }
  return out;
}
