// Guarantees (issue 16 item 1, HOST-091): a command's re-armed reconciliation is data in the ledger. Recovery reads
// the `not_before` of a command's last waiting `reconcile` entry back (on a real SQLite ledger), and the command
// restored from it keeps that time as the earliest moment "no record" may conclude `not_executed`, even when the
// intent's own time would allow it earlier (the live host knew the later send time), and re-arms its
// reconciliation for it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isoAt, RealClock } from '../../src/core/index.js';
import { transition } from '../../machines/governed-command.js';
import { commandOf } from '../../src/engine/command-actor.js';
import type { CallEnv, PendingCommand } from '../../src/engine/call-types.js';
import { scanLedger } from '../../src/engine/recovery.js';
import { openDb, openLedger } from '../../src/ledger/index.js';

const clock = new RealClock();

describe('recovery of a waiting reconciliation', () => {
  it('HOST-091: not_before comes back from the ledger and bounds not_executed after a restart', async () => {
    const db = await openDb(join(mkdtempSync(join(tmpdir(), 'mhs-deadline-')), 'host.db'));
    try {
      const ledger = await openLedger(db, { clock });
      const base = { command_id: 'cmd_1', endpoint_id: 'mhs://deadline/ep', device_id: 'dev' };
      await ledger.append({
        kind: 'command.intent',
        ...base,
        capability_id: 'cap.x.v1',
        tool: 'dev__cap_x_v1',
        session_id: 'ses_x',
        input_digest: 'sha256:0',
        input: {},
        effect: 'actuate',
        deadline_ms: 100,
      });
      const notBefore = clock.now() + 60_000;
      await ledger.append({ kind: 'command.unknown', ...base, reason: 'MHS.TRANSPORT.TIMEOUT' });
      await ledger.append({ kind: 'reconcile', ...base, outcome: 'unknown', not_before: isoAt(notBefore) });
      const scan = await scanLedger(ledger);
      expect(scan.unsettled.map((p) => p.commandId)).toEqual(['cmd_1']);
      const p = scan.unsettled[0] as PendingCommand;
      expect(p.reconcileAt).toBe(notBefore);

      const env = {
        clock,
        transportMarginMs: 50,
        pending: new Map(),
        commands: new Map(),
        usedPermits: new Set(),
      } as unknown as CallEnv;
      const cmd = commandOf(env, p);
      expect(cmd.state.status).toBe('unknown');
      expect(env.pending.has('cmd_1')).toBe(true);
      // The intent's time + 100 ms + 50 ms has long passed, yet the recorded wait holds.
      const [asked] = transition(cmd.state, { type: 'reconcile', at: clock.now() });
      const [after] = transition(asked, { type: 'reconcile.no_record', at: clock.now() });
      expect(after.status).toBe('unknown');
      expect(after.reconcileAt).toBe(p.reconcileAt);
      const [late] = transition(transition(after, { type: 'reconcile', at: notBefore })[0], {
        type: 'reconcile.no_record',
        at: notBefore,
      });
      expect(late.outcome).toEqual({ kind: 'not_executed' });
      const restored = transition(cmd.state, { type: 'restore', at: clock.now() })[1];
      expect(restored).toContainEqual({ type: 'scheduleReconcile', commandId: 'cmd_1', at: p.reconcileAt });
    } finally {
      await db.close();
    }
  });
});
