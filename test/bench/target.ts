/** What the load generator calls: one OpenAI-compatible chat endpoint and how to reach it. */
import type { Child } from './procs.ts';

export interface Target {
  /** Short key used in tables and JSON: direct, gantry, peer. */
  name: string;
  /** Human label, e.g. "Portkey gateway 1.15.2". */
  label: string;
  origin: string;
  path: string;
  headers: Record<string, string>;
  /** The gateway process, for its memory; absent for the direct baseline. */
  child?: Child;
  /** Date.now() when the process was spawned (profiles count from about then). */
  startedAtMs?: number;
  stop(): Promise<void>;
}

/**
 * A prompt of about 1 KB, the size of a real chat turn (a system prompt and a question with
 * some pasted context), so the default guardrails scan and the request log see what they see
 * in production rather than two words.
 */
export const BENCH_SYSTEM_PROMPT =
  'You are a support assistant for an online bookshop. Answer in two or three sentences, ' +
  'cite the order number when the customer gives one, and never promise refunds: point to the ' +
  'returns page instead. If a question is not about books, orders or delivery, say politely ' +
  'that you can only help with the shop.';
export const BENCH_USER_PROMPT =
  'Hello, I ordered three paperbacks last Tuesday (a cookbook, a travel guide to Portugal and ' +
  'a novel) and the tracking page has said "label created" for five days now. The confirmation ' +
  'email said delivery would take two to four working days. I chose standard shipping because ' +
  'the express option was twice the price, but I need the travel guide before I leave on the ' +
  'fourteenth. Could you tell me whether the parcel has actually left the warehouse, whether ' +
  'I can still switch it to express delivery, and, if it is lost, what the fastest way is to ' +
  'get a replacement copy of the guide? Thanks a lot for your help.';

/**
 * The one request every target gets (about 1 KB): the proxy's cost on a realistic prompt. Its
 * cap (64) is above the fake's answer (~31 tokens), which the fake now cuts at the cap.
 */
export function chatBody(stream: boolean): Buffer {
  return Buffer.from(
    JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: BENCH_SYSTEM_PROMPT },
        { role: 'user', content: BENCH_USER_PROMPT },
      ],
      max_tokens: 64,
      ...(stream && { stream: true }),
    }),
  );
}
