/**
 * Replaces finding spans with placeholders. PII gets a numbered placeholder per distinct
 * value and kind across the whole request (`[EMAIL_1]`, `[EMAIL_2]`), so the model can still
 * tell two people apart; secrets become `[REDACTED_SECRET]`, toxic spans
 * `[REDACTED_TOXICITY]`. The numbering map lives only for one request and is never logged.
 */
import type { Finding } from './types.ts';

export class Redactor {
  private readonly numbers = new Map<string, string>();
  private readonly perKind = new Map<string, number>();

  private placeholder(f: Finding, value: string): string {
    if (f.guardrail === 'secrets') return '[REDACTED_SECRET]';
    if (f.guardrail === 'toxicity') return '[REDACTED_TOXICITY]';
    const key = `${f.category}\u0000${value}`;
    let label = this.numbers.get(key);
    if (!label) {
      const n = (this.perKind.get(f.category) ?? 0) + 1;
      this.perKind.set(f.category, n);
      label = `[${f.category}_${n}]`;
      this.numbers.set(key, label);
    }
    return label;
  }

  /** `findings` may overlap; the earliest-starting (then longest) span wins. */
  apply(text: string, findings: Finding[]): string {
    if (findings.length === 0) return text;
    const ordered = [...findings].sort((a, b) => a.start - b.start || b.end - a.end);
    let out = '';
    let at = 0;
    for (const f of ordered) {
      if (f.start < at) continue;
      out += text.slice(at, f.start) + this.placeholder(f, text.slice(f.start, f.end));
      at = f.end;
    }
    return out + text.slice(at);
  }
}
