// Issue 19, operator actions through the endpoint's holder: two real `mhs-host serve` processes on one real PostgreSQL
// store (skipped without MHS_TEST_PG_URL), one real HTTP thermostat simulator whose first capability call executes and
// is never answered (`--drop-reply 1`). A holds the endpoint. Sent to B: the reconciliation of the command A left
// unknown (an agent's `mhs__operations` through B's `/mcp`) and an operator's e-stop and reset
// (`POST /v1/operator/estop`, `/reset`) are each applied once, by A, recorded once, and answered on B as locally.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/ledger/index.js';
import { PG_URL } from '../ledger/helpers.js';
import { callMhs, connectMcpClient } from '../helpers/sim.js';
import { endpointPair, endpointRequestsOf, heldBy } from '../helpers/endpoint-pair.js';
import { call, gatewayHttp } from '../gateway/gateway-helpers.js';
import { ledgerOf, simCounters } from './scale-out-helpers.js';
import { client, makeToken } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

const CONNECTOR = 'opf-thermostat';
const DEVICE = 'thermostat';
const ended = (s: any) => ['completed', 'failed', 'cancelled'].includes(s.status);
const pid = (p: Served) => new RegExp(`:${p.child.pid}$`);

async function gatesOf(location: string): Promise<any[]> {
  const db = await openDb(location);
  try {
    return await db.all('SELECT * FROM device_gates');
  } finally {
    await db.close();
  }
}

describe.skipIf(!PG_URL)('operator actions sent to a process that does not hold the endpoint', () => {
  const h = endpointPair({
    family: 'thermostat',
    prefix: 'opf',
    env: { MHS_RUN_LEASE_TTL_MS: '1500', MHS_RUN_LEASE_SKEW_MS: '200' },
    simFlags: ['--drop-reply', '1', '--operator-tools'],
  });

  it("an unknown outcome A holds, reconciled through B's gateway: A reconciles it once and reopens its gate", async () => {
    const [a, b] = h.procs as [Served, Served];
    const token = await makeToken(h.store.location, 'client', 'opf-client');
    await heldBy(b, a, token, CONNECTOR);
    const wf = {
      id: 'opf-set',
      name: 'opf-set',
      version: '1',
      nodes: [
        {
          id: 'set',
          typeId: 'mhs.invoke',
          name: 'set',
          position: { x: 0, y: 0 },
          inputs: {},
          config: {
            endpoint: h.sim.endpointId,
            device: DEVICE,
            capability: 'cap.thermal.setpoint.v1',
            input: { setpoint_c: 24 },
            deadlineMs: 1000,
          },
        },
      ],
      edges: [],
      triggers: [{ id: 'manual', type: 'manual' }],
      variables: [],
      metadata: {},
      settings: {},
    };
    const op = client(b.url, await makeToken(h.store.location, 'operator', 'opf-op'));
    expect((await op.post('/v1/workflows', wf)).status).toBe(201);
    const api = client(b.url, token);
    const runId = (await api.post('/v1/runs', { workflowId: wf.id })).body.runId as string;
    // A executed the command and never heard back: the outcome is unknown, the device's gate shut in the store.
    expect((await api.until(runId, ended)).status).toBe('failed');
    const intent = (await ledgerOf(h.store.location)).entries.find(
      (e) => e.kind === 'command.intent' && e.run_id === runId,
    )!;
    const commandId = intent.command_id as string;
    const shut = await gatesOf(h.store.location);
    expect(shut.map((g) => [g.command_id, g.owner])).toEqual([[commandId, expect.stringMatching(pid(a))]]);

    const agent = await gatewayHttp(b.url, await makeToken(h.store.location, 'agent', 'opf-bot'), '2026-07-28');
    try {
      const r = await call(agent, 'mhs__operations', { command_id: commandId });
      expect(r.isError, r.text).toBe(false);
      expect(r.body).toMatchObject({ command_id: commandId, reconciled: true, outcome: 'receipt' });
      expect(r.body.receipt.command_id).toBe(commandId);
    } finally {
      await agent.close();
    }
    const rows = (await endpointRequestsOf(h.store.location)).filter((x) => x.op.kind === 'reconcile');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'applied', sender: expect.stringMatching(pid(b)) });
    expect(rows[0].applied_by).toMatch(pid(a));
    expect(await gatesOf(h.store.location)).toEqual([]);
    const { entries, verified } = await ledgerOf(h.store.location);
    expect(entries.filter((e) => e.kind === 'reconcile' && e.command_id === commandId)).toHaveLength(1);
    expect((await simCounters(h.sim, DEVICE)).executions[commandId]).toBe(1);
    expect(verified).toBe(true);
  }, 120_000);

  it('an e-stop and a reset sent to B: A sends each once and records its pair; B answers its outcome', async () => {
    const [a, b] = h.procs as [Served, Served];
    const op = client(b.url, await makeToken(h.store.location, 'operator', 'opf-alice'));
    const dev = { endpoint_id: h.sim.endpointId, device_id: DEVICE };
    expect((await op.post('/v1/operator/estop/allow', { ...dev, allowed: true })).status).toBe(200);
    const safety = async () => {
      const c = await connectMcpClient({ mcpUrl: h.sim.mcpUrl });
      try {
        return (await callMhs(c, 'mhs__safety', { device_id: DEVICE })).body.estop as { engaged: boolean };
      } finally {
        await c.close();
      }
    };

    for (const [what, engaged] of [
      ['estop', true],
      ['reset', false],
    ] as const) {
      const res = await op.post(`/v1/operator/${what}`, dev);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.status).toBe('sent');
      expect((await safety()).engaged).toBe(engaged);
      const rows = (await endpointRequestsOf(h.store.location)).filter(
        (x) => x.op.kind === 'safety' && x.op.action === what,
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ status: 'applied', sender: expect.stringMatching(pid(b)) });
      expect(rows[0].applied_by).toMatch(pid(a));
      const pair = (await ledgerOf(h.store.location)).entries.filter((e) => e.kind.startsWith(`${what}.`));
      expect(pair.map((e) => e.kind)).toEqual([`${what}.request`, `${what}.receipt`]);
      expect(pair[0]).toMatchObject({ ...dev, sent: true, operator: { kind: 'human', name: 'opf-alice' } });
      expect(pair[1]!.receipt).toEqual(res.body.receipt);
    }
    expect((await ledgerOf(h.store.location)).verified).toBe(true);
  }, 90_000);
});
