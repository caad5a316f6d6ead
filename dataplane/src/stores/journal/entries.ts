/**
 * The settlement journal's file format: one JSON object per line, appended only. A `settle`
 * line is a budget settlement the store could not take; a `done` line says that settlement
 * has since been applied. What is pending is every `settle` without a later `done`, in file
 * order. A line cut short by a crash mid-write is ignored: its append never returned, so the
 * request that wrote it never finished either (the same loss as any crash mid-request).
 */
import type { Reservation } from '../budget.ts';

export interface PendingSettlement {
  /** The reservation's id: the budget store applies a settlement once per id, so replays are safe. */
  readonly reservation: Reservation;
  /** What to charge; 0 releases the hold without charging. */
  readonly amountUsd: number;
  /** Epoch ms when the settlement was first attempted. */
  readonly at: number;
}

type Line = { kind: 'settle'; entry: PendingSettlement } | { kind: 'done'; id: string };

export function settleLine(entry: PendingSettlement): string {
  return `${JSON.stringify({ kind: 'settle', entry } satisfies Line)}\n`;
}

export function doneLine(id: string): string {
  return `${JSON.stringify({ kind: 'done', id } satisfies Line)}\n`;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

function isReservation(v: unknown): v is Reservation {
  if (!isRecord(v)) return false;
  return (
    typeof v.id === 'string' &&
    typeof v.tenant === 'string' &&
    typeof v.keyId === 'string' &&
    typeof v.periodKey === 'string' &&
    typeof v.limitUsd === 'number' &&
    typeof v.amountUsd === 'number' &&
    typeof v.expiresAt === 'number' &&
    (v.periodRetentionMs === undefined || typeof v.periodRetentionMs === 'number')
  );
}

function parseLine(text: string): Line | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(v)) return undefined;
  if (v.kind === 'done' && typeof v.id === 'string') return { kind: 'done', id: v.id };
  if (v.kind !== 'settle' || !isRecord(v.entry)) return undefined;
  const { reservation, amountUsd, at } = v.entry;
  if (!isReservation(reservation) || typeof amountUsd !== 'number' || typeof at !== 'number')
    return undefined;
  return { kind: 'settle', entry: { reservation, amountUsd, at } };
}

/** The settlements a journal's text still owes, oldest first; one per reservation id. */
export function pendingSettlements(text: string): PendingSettlement[] {
  const pending = new Map<string, PendingSettlement>();
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    const line = parseLine(raw);
    if (!line) continue;
    if (line.kind === 'done') pending.delete(line.id);
    else if (!pending.has(line.entry.reservation.id)) pending.set(line.entry.reservation.id, line.entry);
  }
  return [...pending.values()];
}

/** Settlements named one by one in the shutdown log; past this only the totals are. */
export const LOGGED_SETTLEMENTS = 100;

/**
 * What a process leaves owed when it exits, for the log: the total (exact to the micro-dollar)
 * and the first settlements themselves, so an operator whose journal directory does not
 * outlive the pod can still settle them by hand.
 */
export function owedSummary(pending: readonly PendingSettlement[]): {
  pending: number;
  owedUsd: number;
  settlements: { id: string; tenant: string; keyId: string; periodKey: string; amountUsd: number }[];
} {
  const micros = pending.reduce((n, s) => n + Math.round(s.amountUsd * 1_000_000), 0);
  return {
    pending: pending.length,
    owedUsd: micros / 1_000_000,
    settlements: pending.slice(0, LOGGED_SETTLEMENTS).map(({ reservation: r, amountUsd }) => ({
      id: r.id,
      tenant: r.tenant,
      keyId: r.keyId,
      periodKey: r.periodKey,
      amountUsd,
    })),
  };
}
