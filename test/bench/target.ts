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

/** The one request every target gets: small, so the figures are the proxy's own cost. */
export function chatBody(stream: boolean): Buffer {
  return Buffer.from(
    JSON.stringify({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Say hi' }],
      max_tokens: 16,
      ...(stream && { stream: true }),
    }),
  );
}
