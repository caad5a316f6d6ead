import type { CcrEntry } from './types.ts';

/**
 * What an entry costs a store's character bound: its content and also its label and
 * keywords, which are kept as long and are as much the client's to choose.
 */
export function entryChars(e: Pick<CcrEntry, 'label' | 'keywords' | 'content'>): number {
  let n = e.content.length + e.label.length;
  for (const k of e.keywords) n += k.length;
  return n;
}
