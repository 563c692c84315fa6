// Guarantees (issue 16, Supervision): an enabled endpoint that is down when `mhs-host serve` starts is not given
// up: the operator API shows it not attached, retrying, with the last error, and once its simulator comes up on
// that port it is attached without restarting serve, and a governed call through it completes.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { simOnPort } from '../helpers/sim.js';
import type { RestartedSim } from '../helpers/sim.js';
import { client, serve } from './serve-helpers.js';
import type { Served } from './serve-helpers.js';

let host: MhsHost<'thermo'>;
let srv: Served | undefined;
let late: RestartedSim | undefined;

beforeAll(async () => {
  host = await startMhsHost({
    prefix: 'late',
    sims: { thermo: ['thermostat', ['--time-scale', '50']] },
    tokens: { op: 'operator' },
    serve: false,
  });
  await host.sims.thermo.stop(); // down before serve starts
}, 120_000);

afterAll(async () => {
  await srv?.stop();
  late?.kill();
  await late?.exited;
  await host?.stop();
});

async function endpoint(api: ReturnType<typeof client>): Promise<any> {
  return (await api.get('/v1/operator/endpoints')).body.endpoints.find((e: any) => e.connector_id === 'late-thermo');
}

describe('an endpoint down at serve start', () => {
  it('is retried with backoff, shown as such, and attached when it comes up', async () => {
    srv = await serve(host.dbPath, ['--no-workflows']);
    expect(srv.output()).toContain('connector late-thermo not attached');
    const api = client(srv.url, host.tokens.op!);
    const down = await endpoint(api);
    expect(down.enabled).toBe(true);
    expect(down.attachment).toMatchObject({ state: 'retrying', last_error: { code: expect.any(String) } });
    expect(down.attachment.attempts).toBeGreaterThanOrEqual(1);
    expect(typeof down.attachment.next_attempt_at).toBe('string');

    late = await simOnPort('thermostat', Number(new URL(host.sims.thermo.url).port), ['--time-scale', '50']);
    const deadline = Date.now() + 60_000;
    while ((await endpoint(api)).attachment?.state !== 'attached' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 250));
    expect((await endpoint(api)).attachment).toMatchObject({ state: 'attached', attempts: 0 });

    const wf = {
      id: 'late-setpoint',
      name: 'late-setpoint',
      version: '1',
      nodes: [
        {
          id: 'warm',
          typeId: 'mhs.invoke',
          name: 'warm',
          position: { x: 0, y: 0 },
          inputs: {},
          config: {
            endpoint: host.sims.thermo.endpointId,
            device: 'thermostat',
            capability: 'cap.thermal.setpoint.v1',
            input: { setpoint_c: 30 },
          },
        },
      ],
      edges: [],
      triggers: [{ id: 'manual', type: 'manual' }],
      variables: [],
      metadata: {},
      settings: {},
    };
    expect((await api.post('/v1/workflows', wf)).status).toBe(201);
    const { runId } = (await api.post('/v1/runs', { workflowId: 'late-setpoint' })).body as { runId: string };
    const snap = await api.until(runId, (s) => ['completed', 'failed', 'cancelled'].includes(s.status));
    expect(snap.status, JSON.stringify(snap)).toBe('completed');
  }, 180_000);
});
