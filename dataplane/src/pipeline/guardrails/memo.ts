/**
 * Detector findings of texts seen recently, so a conversation resent every turn is scanned
 * once, not once per turn: on a chat of 20,000 tokens, all but the newest message (and the
 * tenant's system prompt, the same on every request) come back unchanged.
 *
 * The detectors are pure functions of the text, so a remembered finding list is exactly
 * what a new scan would return; the policy (thresholds, PII kinds, actions) is applied
 * after, per request. Entries belong to one scope (the tenant): another tenant's identical
 * text is a miss, so how fast a scan is tells a tenant nothing about what others sent.
 * Bounded by the characters of the texts held (least recently used go first); short texts
 * are cheaper to scan than to remember.
 */
import type { Finding, GuardrailName } from './types.ts';

export type RememberedFindings = Partial<Record<GuardrailName, Finding[]>>;

interface Entry {
  scope: string;
  findings: RememberedFindings;
}

export class FindingsMemo {
  private readonly entries = new Map<string, Entry>();
  private chars = 0;

  constructor(
    /** Total characters of remembered texts. */
    readonly maxChars: number,
    /** Texts shorter than this are not remembered. */
    readonly minChars: number,
  ) {}

  /**
   * The findings remembered for `text` in `scope`, moved to most recently used; a new empty
   * record (remembered from now on) when there are none. Undefined for a short text.
   * Callers fill in the detectors they run and must not change the lists they get.
   */
  lookup(text: string, scope: string): RememberedFindings | undefined {
    if (text.length < this.minChars || text.length > this.maxChars) return undefined;
    const hit = this.entries.get(text);
    if (hit) {
      this.entries.delete(text);
      this.entries.set(text, hit);
      if (hit.scope !== scope) {
        hit.scope = scope;
        hit.findings = {};
      }
      return hit.findings;
    }
    const entry: Entry = { scope, findings: {} };
    this.entries.set(text, entry);
    this.chars += text.length;
    for (const key of this.entries.keys()) {
      if (this.chars <= this.maxChars) break;
      this.entries.delete(key);
      this.chars -= key.length;
    }
    return entry.findings;
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.chars = 0;
  }
}

/** 4 M characters (8 MB of text) per process: a few hundred long conversations. */
export const SCAN_MEMO = new FindingsMemo(4_000_000, 128);
