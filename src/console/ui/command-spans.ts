// A device's commands from its ledger entries (issue 18 item 5): each intent to its outcome, as spans on a timeline.
import type { LedgerEntry } from './types.js';

/** How a command ended as far as the ledger says. */
export type Outcome = 'completed' | 'failed' | 'rejected' | 'unknown' | 'running' | 'not_sent' | 'not_executed';

export interface CommandSpan {
  command_id: string;
  capability_id: string;
  /** Epoch ms of the intent and of the entry that settled it (null: not settled, drawn to now). */
  start: number;
  end: number | null;
  outcome: Outcome;
}

const FINAL = new Set(['completed', 'failed', 'rejected']);

/**
 * One span per `command.intent` among `entries`: to its first final receipt (`completed`, `failed`, `rejected`), or
 * its `command.not_sent`, or a reconciliation that found it `not_executed`; unsettled, `unknown` once recorded so
 * (`command.unknown`, a receipt `unknown`) and `running` otherwise. Oldest first.
 */
export function commandSpans(entries: LedgerEntry[]): CommandSpan[] {
  const spans = new Map<string, CommandSpan>();
  const sorted = [...entries].sort((a, b) => a.seq - b.seq);
  for (const e of sorted) {
    const id = typeof e.command_id === 'string' ? e.command_id : null;
    if (!id) continue;
    const t = Date.parse(e.ts);
    if (e.kind === 'command.intent') {
      const capability_id = typeof e.capability_id === 'string' ? e.capability_id : '(capability?)';
      spans.set(id, { command_id: id, capability_id, start: t, end: null, outcome: 'running' });
      continue;
    }
    const s = spans.get(id);
    if (!s || s.end !== null) continue;
    const status = (e.receipt as { status?: string } | undefined)?.status;
    if (e.kind === 'receipt' && status && FINAL.has(status)) Object.assign(s, { end: t, outcome: status });
    else if (e.kind === 'receipt' && status === 'unknown') s.outcome = 'unknown';
    else if (e.kind === 'command.unknown') s.outcome = 'unknown';
    else if (e.kind === 'command.not_sent') Object.assign(s, { end: t, outcome: 'not_sent' });
    else if (e.kind === 'reconcile' && e.outcome === 'not_executed')
      Object.assign(s, { end: t, outcome: 'not_executed' });
  }
  return [...spans.values()];
}

/** Each outcome's colour, symbol and words (the symbol and words say it without the colour). */
export const OUTCOME_STYLE: Record<Outcome, { colour: string; symbol: string; text: string }> = {
  completed: { colour: '#1d6b2a', symbol: '✔', text: 'completed' },
  failed: { colour: '#b00000', symbol: '✖', text: 'failed' },
  rejected: { colour: '#7a0060', symbol: '⊘', text: 'rejected by the endpoint' },
  unknown: { colour: '#b07000', symbol: '?', text: 'outcome unknown, awaiting reconciliation' },
  running: { colour: '#1a4fb0', symbol: '▶', text: 'in flight' },
  not_sent: { colour: '#666666', symbol: '–', text: 'not sent' },
  not_executed: { colour: '#666666', symbol: '–', text: 'not executed (reconciled)' },
};
