import type { Ledger, LedgerEntry } from '../ledger/index.js';
import type { RunEvent } from './types.js';

/** One Layer-2 effect record of a run (v2 idempotency.md §"Layer 2", effect-ledger-projection.schema.json). */
export interface RunEffect {
  /** The governed command's id: the identity journaled before the send and sent to the endpoint as `_mhs.command_id`. */
  commandId: string;
  nodeId: string;
  /** Always 1: a command is sent at most once and, after a restart, reconciled rather than resent (HOST-081/091). */
  attempt: 1;
  state: 'claimed' | 'completed' | 'released';
  /** When the record reached its state (the ledger entry's `ts`). */
  at: string;
  /** The ledger `seq` of the `command.intent` (the claim): the projection's order. */
  intentSeq: number;
}

/** The ledger reads the projection makes: pages of entries and one command's entries (both indexed). */
export type EffectLedger = Pick<Ledger, 'head' | 'range' | 'byCommand'>;

const PAGE = 500;
/** The checkpoint an MHS node records before its first send (mhs-nodes.ts `ledgerMark`): the ledger head then. */
const LEDGER_MARK = 'mhs.ledgerFrom';
// Receipt statuses of a command still executing or not yet known (src/mhs/wire-types.ts ReceiptStatus).
const OPEN_RECEIPT = new Set(['accepted', 'running', 'unknown']);

/** The lowest ledger head any MHS node of this run recorded before sending, or undefined when none did. */
export function firstLedgerMark(events: readonly RunEvent[]): number | undefined {
  let min: number | undefined;
  for (const e of events) {
    if (e.type !== 'log.appended') continue;
    const f = e.payload.fields as { checkpoint?: unknown; value?: unknown } | undefined;
    if (f?.checkpoint === LEDGER_MARK && typeof f.value === 'number') min = Math.min(min ?? f.value, f.value);
  }
  return min;
}

/**
 * Where one command stands from its ledger entries: a final receipt `completed` (the device executed it, whatever its
 * result), a `rejected` receipt, `command.not_sent` or an endpoint fault that executed nothing `released` (the claim
 * ended with no effect), anything else `claimed` (in flight, `command.unknown` until reconciled, or still running).
 */
export function commandState(intent: LedgerEntry, entries: readonly LedgerEntry[]): Pick<RunEffect, 'state' | 'at'> {
  let out: Pick<RunEffect, 'state' | 'at'> = { state: 'claimed', at: intent.ts };
  for (const e of entries) {
    if (e.seq <= intent.seq) continue;
    if (e.kind === 'receipt') {
      const status = (e.receipt as { status?: unknown } | undefined)?.status ?? e.status;
      if (status === 'rejected') out = { state: 'released', at: e.ts };
      else if (typeof status === 'string' && !OPEN_RECEIPT.has(status)) out = { state: 'completed', at: e.ts };
    } else if (e.kind === 'command.not_sent' || (e.kind === 'error' && e.executed === false)) {
      if (out.state === 'claimed') out = { state: 'released', at: e.ts };
    }
  }
  return out;
}

/**
 * The effect ledger of run `runId`: every governed MHS command a node of the run journaled (the `command.intent`
 * carrying `run_id`, the atomic claim of HOST-091), in ledger order, with its state from the command's own entries.
 * The scan starts at the first ledger mark the run's MHS nodes recorded, so a run that sent nothing reads no ledger
 * page; a fork's copied prefix holds its source's marks, whose intents carry the source's run id and are not its own.
 */
export async function runEffects(
  ledger: EffectLedger,
  runId: string,
  events: readonly RunEvent[],
): Promise<RunEffect[]> {
  const mark = firstLedgerMark(events);
  if (mark === undefined) return [];
  const intents: LedgerEntry[] = [];
  const head = (await ledger.head()).seq;
  // Page by sequence up to the head read first (a retention prune may leave gaps; later intents are a later read's).
  for (let from = mark + 1; from <= head; from += PAGE)
    for (const e of await ledger.range(from, Math.min(head, from + PAGE - 1)))
      if (e.kind === 'command.intent' && e.run_id === runId && typeof e.node_id === 'string') intents.push(e);
  const out: RunEffect[] = [];
  for (const intent of intents) {
    const commandId = intent.command_id as string;
    out.push({
      commandId,
      nodeId: intent.node_id as string,
      attempt: 1,
      intentSeq: intent.seq,
      ...commandState(intent, await ledger.byCommand(commandId)),
    });
  }
  return out;
}
