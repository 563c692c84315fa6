// Guarantees (v2 idempotency.md §"Layer 2": the effect record's state; src/openwop/run-effects.ts): a governed
// command's state follows its own ledger entries after the intent — `claimed` while in flight, after
// `command.unknown` and under a receipt still `accepted`/`running`/`unknown`; `completed` on a final receipt
// (`completed` or `failed`: the device executed it); `released` on `command.not_sent`, an endpoint fault that executed
// nothing, or a `rejected` receipt; `at` is the deciding entry's time; and the scan starts at the run's lowest
// `mhs.ledgerFrom` checkpoint (none: no ledger read at all).
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/ledger/index.js';
import { commandState, firstLedgerMark, runEffects } from '../../src/openwop/run-effects.js';
import type { RunEvent } from '../../src/openwop/types.js';

let seq = 10;
const entry = (kind: string, extra: Record<string, unknown> = {}): LedgerEntry =>
  ({
    kind,
    seq: ++seq,
    ts: `2026-12-02T10:00:${String(seq).padStart(2, '0')}.000Z`,
    prev_digest: 'p',
    digest: 'd',
    command_id: 'cmd_01',
    ...extra,
  }) as unknown as LedgerEntry;
const receipt = (status: string) => entry('receipt', { status, receipt: { status } });

describe('the state of a governed command in the effect ledger', () => {
  it('claimed until an outcome; completed on a final receipt; released when nothing executed', () => {
    const intent = entry('command.intent');
    expect(commandState(intent, [intent])).toEqual({ state: 'claimed', at: intent.ts });
    for (const open of ['accepted', 'running', 'unknown'])
      expect(commandState(intent, [intent, receipt(open)]).state, open).toBe('claimed');
    expect(commandState(intent, [intent, entry('command.unknown')]).state).toBe('claimed');
    for (const done of ['completed', 'failed']) {
      const r = receipt(done);
      expect(commandState(intent, [intent, receipt('running'), r]), done).toEqual({ state: 'completed', at: r.ts });
    }
    const notSent = entry('command.not_sent');
    expect(commandState(intent, [intent, notSent])).toEqual({ state: 'released', at: notSent.ts });
    expect(commandState(intent, [intent, entry('error', { executed: false })]).state).toBe('released');
    expect(commandState(intent, [intent, entry('error', { executed: true })]).state).toBe('claimed');
    expect(commandState(intent, [intent, receipt('rejected')]).state).toBe('released');
    // Entries before the intent are not its outcome.
    const early = receipt('completed');
    const later = entry('command.intent');
    expect(commandState(later, [early, later]).state).toBe('claimed');
  });

  it('the scan starts at the lowest ledger mark of the run; a run with none reads no ledger page', async () => {
    const mark = (value: number, sequence: number): RunEvent =>
      ({
        type: 'log.appended',
        sequence,
        payload: { level: 'debug', fields: { checkpoint: 'mhs.ledgerFrom', value } },
      }) as unknown as RunEvent;
    expect(firstLedgerMark([])).toBeUndefined();
    expect(firstLedgerMark([mark(40, 1), mark(7, 2), mark(12, 3)])).toBe(7);
    const reads: Array<[number, number | undefined]> = [];
    const ledger = {
      head: async () => ({ seq: 1200 }) as LedgerEntry,
      range: async (from: number, to?: number) => {
        reads.push([from, to]);
        return [];
      },
      byCommand: async () => [],
    };
    expect(await runEffects(ledger, 'run_x', [])).toEqual([]);
    expect(reads).toEqual([]);
    await runEffects(ledger, 'run_x', [mark(7, 1)]);
    expect(reads).toEqual([
      [8, 507],
      [508, 1007],
      [1008, 1200],
    ]);
  });
});
