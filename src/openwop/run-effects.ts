import type { Ledger, LedgerEntry } from '../ledger/index.js';
import type { EffectAttempt, EffectSeamName, EffectState, RunEffectRecords } from './effects/effect-records.js';

/** One Layer-2 effect record of a run (v2 idempotency.md §"Layer 2", effect-ledger-projection.schema.json). */
export interface RunEffect {
  /** The effect's identity: a governed command's id, or the `eff-…` id of an MCP tool call or model call. */
  effectId: string;
  seam: EffectSeamName;
  nodeId: string;
  /** 1, or higher for a retry of the same effect after a released (or, for a model call, dead) attempt. */
  attempt: number;
  /**
   * The identity the provider receives: a governed command's id (`_mhs.command_id`), a remote run's `Idempotency-Key`;
   * none for MCP and model calls (they receive no key).
   */
  providerKey?: string;
  state: EffectState;
  /** When the attempt reached its state. */
  at: string;
}

/** The ledger read the projection makes for a governed command's state (indexed by command id). */
export type EffectLedger = Pick<Ledger, 'byCommand'>;

// Receipt statuses of a command still executing or not yet known (src/mhs/wire-types.ts ReceiptStatus).
const OPEN_RECEIPT = new Set(['accepted', 'running', 'unknown']);

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

/** A governed command's record, its state read from its ledger entries; undefined when a prune removed its intent. */
async function mhsEffect(ledger: EffectLedger, row: EffectAttempt): Promise<RunEffect | undefined> {
  const entries = await ledger.byCommand(row.effectId);
  const intent = entries.find((e) => e.kind === 'command.intent');
  if (!intent) return undefined;
  return {
    effectId: row.effectId,
    seam: row.seam,
    nodeId: row.nodeId,
    attempt: 1,
    providerKey: row.effectId,
    ...commandState(intent, entries),
  };
}

/**
 * The effect ledger of run `runId`, in claim order, from the run's rows of the effect index (`openwop_run_effects`,
 * read through its run-id index: no other run's records and no ledger scan): each attempt of an MCP tool call or model
 * call with its stored state, and each governed MHS command a node of the run journaled (the index row the database
 * wrote with its `command.intent`, HOST-091's atomic claim) with its state from the host ledger. Without `ledger`
 * (no host ledger on this host) governed commands are not listed.
 */
export async function runEffects(
  records: Pick<RunEffectRecords, 'forRun'>,
  ledger: EffectLedger | undefined,
  runId: string,
): Promise<RunEffect[]> {
  const out: RunEffect[] = [];
  for (const row of await records.forRun(runId)) {
    if (row.seam === 'mhs.governed-call') {
      const e = ledger ? await mhsEffect(ledger, row) : undefined;
      if (e) out.push(e);
      continue;
    }
    out.push({
      effectId: row.effectId,
      seam: row.seam,
      nodeId: row.nodeId,
      attempt: row.attempt,
      ...(row.providerKey !== null ? { providerKey: row.providerKey } : {}),
      state: row.state,
      at: row.at,
    });
  }
  return out;
}
