// Guarantees (issue 16 item 4, HOST-045), over HTTP against `mhs-host serve` with a real simulator: cancelling a
// run whose mhs.invoke node waits for an approval voids that approval (status `voided`, reason `run_cancelled`,
// recorded as an `approval`/`voided` ledger entry with the run and node); approving it afterwards is refused
// (409), and nothing is sent to the device.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ledgerEntries, startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { client } from './serve-helpers.js';

vi.setConfig({ hookTimeout: 180_000, testTimeout: 60_000 });

let host: MhsHost<'lh'>;

beforeAll(async () => {
  host = await startMhsHost({
    prefix: 'apr-cancel',
    sims: { lh: ['liquid-handler', ['--operator-tools']] },
    tokens: { c: 'client', op: 'operator' },
  });
  const aspirate = {
    id: 'aspirate',
    typeId: 'mhs.invoke',
    name: 'aspirate',
    position: { x: 0, y: 0 },
    inputs: {},
    config: {
      endpoint: host.sims.lh.endpointId,
      device: 'liquid-handler',
      capability: 'cap.liquid.aspirate.v1',
      input: { volume_ul: 5 },
    },
  };
  const wf = {
    id: 'apr-cancel',
    name: 'apr-cancel',
    version: '1',
    nodes: [aspirate],
    edges: [],
    triggers: [{ id: 'manual', type: 'manual' }],
    variables: [],
    metadata: {},
    settings: {},
  };
  expect((await client(host.srv!.url, host.tokens.op!).post('/v1/workflows', wf)).status).toBe(201);
});

afterAll(async () => {
  await host?.stop();
});

describe('issue 16: approvals of a cancelled run', () => {
  it('cancelling a run that waits for an approval voids it and records why; approving it later is refused', async () => {
    const api = client(host.srv!.url, host.tokens.c!);
    const op = client(host.srv!.url, host.tokens.op!);
    const runId = (await api.post('/v1/runs', { workflowId: 'apr-cancel' })).body.runId as string;
    await api.until(runId, (s) => s.status === 'waiting-approval');
    const pending = (await op.get('/v1/operator/approvals?status=pending')).body.approvals as any[];
    const mine = pending.find((a) => a.run_id === runId);
    expect(mine).toBeDefined();

    expect((await api.post(`/v1/runs/${runId}/cancel`, { reason: 'changed my mind' })).status).toBeLessThan(300);
    const s = await api.until(runId, (x) => ['completed', 'failed', 'cancelled'].includes(x.status as string));
    expect(s.status).toBe('cancelled');

    const after = (await op.get(`/v1/operator/approvals/${mine.approval_id}`)).body;
    expect(after).toMatchObject({ status: 'voided', reason: 'run_cancelled' });
    const approve = await op.post(`/v1/operator/approvals/${mine.approval_id}/approve`, {});
    expect(approve.status).toBe(409);

    const entries = await ledgerEntries(host.dbPath);
    expect(entries.filter((e) => e.kind === 'approval' && e.approval_id === mine.approval_id)).toMatchObject([
      { event: 'requested' },
      { event: 'voided', reason: 'run_cancelled', run_id: runId, node_id: 'aspirate' },
      // Issue 20: the refused later approval is recorded too.
      { event: 'vote_refused', status: 'voided', decision: 'approve' },
    ]);
    expect(entries.filter((e) => e.kind === 'command.intent' && e.run_id === runId)).toEqual([]);
  });
});
