/**
 * Detector findings of texts seen recently, so a conversation resent every turn is scanned
 * once, not once per turn: on a chat of 20,000 tokens, all but the newest message (and the
 * tenant's system prompt, the same on every request) come back unchanged.
 *
 * The detectors are pure functions of the text, so a remembered finding list is exactly
 * what a new scan would return; the policy (thresholds, PII kinds, actions) is applied
 * after, per request. Entries belong to one scope (the tenant), keyed by scope and text: an
 * identical text from another tenant is its own entry, so neither a hit nor a miss tells a
 * tenant anything about what others sent, and no tenant's lookup wipes another's findings.
 * Bounded by the characters of the texts held, fairly between scopes (TenantBound): past a
 * scope's own share its least recently used text goes, past the total the largest scope's,
 * so one tenant sending many long texts flushes its own entries, not others'. Short texts
 * are cheaper to scan than to remember.
 */
import { TenantBound } from '../../stores/tenant-bound.ts';
import type { Finding, GuardrailName } from './types.ts';

export type RememberedFindings = Partial<Record<GuardrailName, Finding[]>>;

export class FindingsMemo {
  /** Scope → text → findings: nested, so a lookup hashes the text itself, not a copy. */
  private readonly scopes = new Map<string, Map<string, RememberedFindings>>();
  private bound: TenantBound;

  constructor(
    /** Total characters of remembered texts. */
    readonly maxChars: number,
    /** Texts shorter than this are not remembered. */
    readonly minChars: number,
    /** One scope's share at most (default: the total; largest-first eviction still applies). */
    readonly maxCharsPerScope: number = maxChars,
  ) {
    this.bound = this.newBound();
  }

  private newBound(): TenantBound {
    return new TenantBound({
      maxEntries: Number.MAX_SAFE_INTEGER,
      maxBytes: this.maxChars,
      maxBytesPerTenant: this.maxCharsPerScope,
    });
  }

  /**
   * The findings remembered for `text` in `scope`, moved to most recently used; a new empty
   * record (remembered from now on) when there are none. Undefined for a short text.
   * Callers fill in the detectors they run and must not change the lists they get.
   */
  lookup(text: string, scope: string): RememberedFindings | undefined {
    if (text.length < this.minChars || text.length > this.maxCharsPerScope) return undefined;
    let texts = this.scopes.get(scope);
    if (!texts) this.scopes.set(scope, (texts = new Map()));
    let findings = texts.get(text);
    if (!findings) texts.set(text, (findings = {}));
    // A rewrite of the same key counts as the newest: this is what keeps the order LRU.
    for (const victim of this.bound.added(scope, text, text.length)) {
      const victimTexts = this.scopes.get(victim.tenant);
      victimTexts?.delete(victim.key);
      if (victimTexts?.size === 0) this.scopes.delete(victim.tenant);
    }
    return findings;
  }

  get size(): number {
    return this.bound.usage().entries;
  }

  /** Characters held for one scope (all scopes when omitted). */
  chars(scope?: string): number {
    return this.bound.usage(scope).bytes;
  }

  clear(): void {
    this.scopes.clear();
    this.bound = this.newBound();
  }
}

/** 4 M characters (8 MB of text) per process: a few hundred long conversations. */
export const SCAN_MEMO = new FindingsMemo(4_000_000, 128);
