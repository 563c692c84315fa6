// Guarantees (issue 18 item 4): a receipt entry carries the workflow run of its command, so a ledger filter by run
// shows intent -> receipt; after a restart the run comes from the journalled intent (start-up recovery and
// reconciliation build the command from it), and a command of no run gets no `run_id`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { appendReceipt } from '../../src/engine/call-outcome.js';
import type { CallEnv } from '../../src/engine/call-types.js';
import { pendingFromIntent } from '../../src/engine/recovery.js';
import type { Receipt } from '../../src/mhs/wire-types.js';
import { openStore } from './harness.js';
import type { Store } from './harness.js';

let store: Store;
beforeAll(async () => {
  store = await openStore();
});
afterAll(async () => {
  await store?.close();
});

const intent = (commandId: string, runId?: string) => ({
  kind: 'command.intent' as const,
  command_id: commandId,
  endpoint_id: 'mhs://run-id/ep',
  device_id: 'dev',
  capability_id: 'cap.x.v1',
  tool: 'dev__cap_x_v1',
  session_id: 'ses_1',
  input_digest: 'a'.repeat(64),
  input: {},
  effect: 'actuate',
  deadline_ms: 1000,
  ...(runId ? { run_id: runId } : {}),
});

const receiptOf = (commandId: string) =>
  ({
    command_id: commandId,
    session_id: 'ses_1',
    endpoint_id: 'mhs://run-id/ep',
    device_id: 'dev',
    capability_id: 'cap.x.v1',
    input_digest: 'a'.repeat(64),
    status: 'completed',
  }) as unknown as Receipt;

describe('receipts carry the run of their command', () => {
  it("a command rebuilt from its journalled intent keeps the intent's run, and its receipt entry carries it", async () => {
    const journalled = await store.ledger.append(intent('cmd_run_1', 'run_01RECEIPTRUN0000000000000'));
    const p = pendingFromIntent(journalled);
    expect(p.runId).toBe('run_01RECEIPTRUN0000000000000');
    const env = { clock: new RealClock(), ledger: store.ledger } as unknown as CallEnv;
    const entry = await appendReceipt(env, p, receiptOf('cmd_run_1'), { reconciled: true });
    expect(entry).toMatchObject({ kind: 'receipt', command_id: 'cmd_run_1', run_id: 'run_01RECEIPTRUN0000000000000' });
  });

  it('a command of no run gets a receipt without run_id', async () => {
    const p = pendingFromIntent(await store.ledger.append(intent('cmd_run_2')));
    const env = { clock: new RealClock(), ledger: store.ledger } as unknown as CallEnv;
    const entry = await appendReceipt(env, p, receiptOf('cmd_run_2'));
    expect('run_id' in entry).toBe(false);
  });
});
