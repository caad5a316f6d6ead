/** Fault rules: which request gets which misbehaviour. */
import { isRecord } from './behaviour.ts';
import type { Fault, FaultRule } from './types.ts';

const STREAM_ONLY = new Set<Fault['type']>([
  'slow-stream',
  'stall-stream',
  'break-stream',
  'no-done',
  'malformed-chunk',
  'endless-line',
  'stream-error',
]);

/** Stream faults cannot apply to a JSON answer, so such rules skip non-stream requests. */
export function isStreamFault(fault: Fault): boolean {
  return STREAM_ONLY.has(fault.type);
}

export interface FaultSubject {
  path: string;
  model: string | undefined;
  stream: boolean;
}

export function ruleMatches(rule: FaultRule, subject: FaultSubject): boolean {
  const m = rule.match ?? {};
  if (m.path !== undefined && !subject.path.includes(m.path)) return false;
  if (m.model !== undefined && m.model !== subject.model) return false;
  if (m.stream !== undefined && m.stream !== subject.stream) return false;
  if (!subject.stream && isStreamFault(rule.fault)) return false;
  return true;
}

/** Holds the active rules; each request consumes at most one use of the first live match. */
export class FaultBook {
  private rules: { rule: FaultRule; left: number }[] = [];

  set(rules: FaultRule[]): void {
    this.rules = rules.map((rule) => ({ rule, left: rule.times ?? Number.POSITIVE_INFINITY }));
  }

  clear(): void {
    this.rules = [];
  }

  take(subject: FaultSubject): Fault | undefined {
    for (const entry of this.rules) {
      if (entry.left <= 0 || !ruleMatches(entry.rule, subject)) continue;
      entry.left -= 1;
      return entry.rule.fault;
    }
    return undefined;
  }
}

const FAULT_TYPES = new Set<string>(['status', 'hang', 'delay', 'reset', 'no-usage', ...STREAM_ONLY]);

/** Light check of rules posted to `/_fake/faults` by hand. */
export function parseRules(body: unknown): FaultRule[] | string {
  if (!Array.isArray(body)) return 'expected a JSON array of fault rules';
  for (const [i, rule] of body.entries()) {
    if (!isRecord(rule) || !isRecord(rule.fault) || typeof rule.fault.type !== 'string') {
      return `rule ${i}: expected {match?, times?, fault: {type, ...}}`;
    }
    if (!FAULT_TYPES.has(rule.fault.type)) return `rule ${i}: unknown fault type ${rule.fault.type}`;
  }
  return body as FaultRule[];
}
