// Guarantees (v2 idempotency.md §"Layer 2": the effect record's state; src/openwop/run-effects.ts): a governed
// command's state follows its own ledger entries after the intent — `claimed` while in flight, after
// `command.unknown` and under a receipt still `accepted`/`running`/`unknown`; `completed` on a final receipt
// (`completed` or `failed`: the device executed it); `released` on `command.not_sent`, an endpoint fault that executed
// nothing, or a `rejected` receipt; `at` is the deciding entry's time; and a run's effect ledger is its own index rows
// in claim order (MCP and model attempts as stored, governed commands with their ledger state, a pruned one left out).
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/ledger/index.js';
import type { EffectAttempt } from '../../src/openwop/effects/effect-records.js';
import { commandState, runEffects } from '../../src/openwop/run-effects.js';

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

  it('a run reads its own index rows only: attempts with their stored state, commands with their ledger state', async () => {
    const intent = entry('command.intent', { command_id: 'cmd_02' });
    const done = entry('receipt', { command_id: 'cmd_02', status: 'completed', receipt: { status: 'completed' } });
    const row = (over: Partial<EffectAttempt>): EffectAttempt => ({
      id: 1,
      runId: 'run_x',
      nodeId: 'n',
      effectId: 'eff-0',
      attempt: 1,
      seam: 'mcp.client-call',
      providerKey: null,
      state: 'completed',
      claimedAt: 't0',
      at: 't1',
      requestDigest: 'd',
      outcome: { secret: 'never projected' },
      ...over,
    });
    const asked: string[] = [];
    const records = {
      forRun: async (runId: string) => {
        asked.push(runId);
        return [
          row({ id: 1, effectId: 'eff-a', state: 'claimed', at: 'ta' }),
          row({ id: 2, effectId: 'cmd_02', seam: 'mhs.governed-call', nodeId: 'm', state: 'claimed' }),
          row({ id: 3, effectId: 'cmd_gone', seam: 'mhs.governed-call' }),
          row({ id: 4, effectId: 'eff-b', seam: 'provider.model-call', attempt: 2, at: 'tb' }),
        ];
      },
    };
    const ledger = { byCommand: async (id: string) => (id === 'cmd_02' ? [intent, done] : []) };
    const out = await runEffects(records, ledger, 'run_x');
    expect(asked).toEqual(['run_x']);
    expect(out).toEqual([
      { effectId: 'eff-a', seam: 'mcp.client-call', nodeId: 'n', attempt: 1, state: 'claimed', at: 'ta' },
      {
        effectId: 'cmd_02',
        seam: 'mhs.governed-call',
        nodeId: 'm',
        attempt: 1,
        providerKey: 'cmd_02',
        state: 'completed',
        at: done.ts,
      },
      { effectId: 'eff-b', seam: 'provider.model-call', nodeId: 'n', attempt: 2, state: 'completed', at: 'tb' },
    ]);
    // Without the host ledger no governed command is listed.
    expect((await runEffects(records, undefined, 'run_x')).map((e) => e.effectId)).toEqual(['eff-a', 'eff-b']);
  });
});
