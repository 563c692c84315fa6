// Guarantees (replay.md §"Side-effect suppression in replay", RFC 0140; architecture: MHS nodes drive hardware), over
// HTTP against `mhs-host serve` with a real simulator endpoint: an `mhs.invoke` node is side-effecting, so a
// `mode:"replay"` fork of a completed run resolves it from the recorded receipt and sends nothing to the device (the
// simulator's execution counters do not move), while the source run's command executed exactly once.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { callMhs, connectMcpClient } from '../helpers/sim.js';
import { client, logProblems } from '../server/serve-helpers.js';

let host: MhsHost<'thermo'>;

beforeAll(async () => {
  host = await startMhsHost({
    prefix: 'replay-mhs',
    sims: { thermo: ['thermostat', ['--time-scale', '50']] },
    tokens: { 'replay-client': 'client', 'replay-op': 'operator' },
  });
}, 180_000);

afterAll(async () => {
  await host?.stop();
});

const terminal = (s: Record<string, any>) => ['completed', 'failed', 'cancelled'].includes(s.status as string);

async function counters(): Promise<Record<string, number>> {
  const c = await connectMcpClient({ mcpUrl: host.sims.thermo.mcpUrl });
  try {
    const state = (await callMhs(c, 'mhs__read', { device_id: 'thermostat', resource: '_counters' })).body
      .state as Record<string, any>;
    return { ...((state.executions ?? state) as Record<string, number>) };
  } finally {
    await c.close();
  }
}

describe('replay fork of an mhs.invoke run', () => {
  it('sends nothing to the simulator: its execution counters do not move; the receipt is the recorded one', async () => {
    const api = client(host.srv!.url, host.tokens['replay-client']!);
    const wf = {
      id: 'replay-setpoint',
      name: 'replay-setpoint',
      version: '1',
      nodes: [
        {
          id: 'warm',
          typeId: 'mhs.invoke',
          name: 'warm',
          position: { x: 0, y: 0 },
          config: {
            endpoint: host.sims.thermo.endpointId,
            device: 'thermostat',
            capability: 'cap.thermal.setpoint.v1',
            input: { setpoint_c: 30 },
          },
          inputs: {},
        },
      ],
      edges: [],
      triggers: [{ id: 'manual', type: 'manual' }],
      variables: [],
      metadata: {},
      settings: {},
    };
    expect((await client(host.srv!.url, host.tokens['replay-op']!).post('/v1/workflows', wf)).status).toBe(201);
    const src = (await api.post('/v1/runs', { workflowId: 'replay-setpoint' })).body.runId as string;
    const done = await api.until(src, terminal);
    expect(done.status).toBe('completed');
    const commandId = (done.nodeStates.warm.outputs as any).commandId as string;
    const before = await counters();
    expect(before[commandId]).toBe(1);

    const fork = await api.post(`/v1/runs/${src}:fork`, { mode: 'replay' });
    expect(fork.status).toBe(201);
    const replayed = await api.until(fork.body.runId as string, terminal);
    expect(replayed.status).toBe('completed');
    expect(await counters()).toEqual(before);

    const events = await api.events(fork.body.runId as string);
    expect(logProblems(events)).toEqual([]);
    const completed = events.find((e) => e.type === 'node.completed' && e.nodeId === 'warm')!;
    expect(completed.payload.outputs).toEqual(done.nodeStates.warm.outputs);
    expect(completed.payload.replayedFrom).toMatchObject({ sourceRunId: src, execution: 1 });
  }, 180_000);
});
