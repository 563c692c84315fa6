// Guarantees (issue 5: one host runtime), in process against real simulator processes and a real SQLite file:
// `openHostRuntime({attachEnabled})` (what `serve` opens) attaches every enabled connector at once and a
// connector an operator enables later (one connection even when a CLI-style `connectEndpoint` races the
// attach-on-enable); its engine decides with the policy gate (an R2 call waits as a pending approval; a
// disabled connector is refused before anything is sent); and its connections reconnect by themselves through
// the permit guard: after the endpoint dies a call fails fast before sending (MHS.TRANSPORT.DISCONNECTED), and
// once it is back on the same port calls complete again (HOST-068, 082, 091).
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ErrorCode, HostError } from '../../src/core/index.js';
import { openHostRuntime } from '../../src/engine/host-runtime.js';
import type { HostRuntime } from '../../src/engine/host-runtime.js';
import type { EndpointActor, EndpointStatus } from '../../src/engine/index.js';
import { startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { simOnPort, startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';

const status = (ep: EndpointActor, want: EndpointStatus) => firstValueFrom(ep.status$.pipe(filter((s) => s === want)));

async function failure(p: Promise<unknown>): Promise<HostError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof HostError) return err;
    throw err;
  }
  throw new Error('expected a HostError');
}

let host: MhsHost<'conveyor' | 'lh'>;
let late: SimHttp;
let rt: HostRuntime;
const restarted: Array<{ kill(): void; exited: Promise<unknown> }> = [];

beforeAll(async () => {
  [host, late] = await Promise.all([
    startMhsHost({
      prefix: 'rt',
      sims: { conveyor: ['conveyor'], lh: ['liquid-handler', ['--operator-tools']] },
      serve: false,
    }),
    startSimHttp('thermostat'),
  ]);
  rt = await openHostRuntime({
    db: host.dbPath,
    attachEnabled: true,
    engine: { reconnect: { initialMs: 50, maxMs: 400 }, probeIntervalMs: 200, transportMarginMs: 500 },
  });
}, 120_000);

afterAll(async () => {
  await rt?.close();
  for (const r of restarted) r.kill();
  await Promise.all([host?.stop(), late?.stop()]);
});

describe('openHostRuntime (serve and CLI)', () => {
  it('HOST-068: enabled connectors are attached at open; one enabled later is attached once, even with a racing connectEndpoint', async () => {
    expect(rt.failed).toEqual([]);
    expect([...rt.attached].sort()).toEqual([host.sims.conveyor.endpointId, host.sims.lh.endpointId].sort());
    await rt.connectors.upsertDiscovered({
      connector_id: 'rt-late',
      transport: 'http',
      url: late.mcpUrl,
      base_url: late.url,
      endpoint_id: late.endpointId,
      display_name: 'late',
      source: { kind: 'env', ref: 'MHS_ENDPOINTS' },
      seen_in: [{ kind: 'env', ref: 'MHS_ENDPOINTS' }],
      auth: { scheme: 'none' },
      descriptor: null,
    });
    // Disabled: refused before any connection (HOST-068).
    expect((await failure(rt.connectEndpoint('rt-late'))).code).toBe(ErrorCode.HOST_CONNECTOR_DISABLED);
    const disclosed = new Promise<void>((resolve) => {
      const off = rt.services.events.subscribe((e) => {
        if (e.type === 'ledger.appended' && e.data.kind === 'disclosure') {
          off();
          resolve();
        }
      });
    });
    await rt.enablement.enable('rt-late', { id: 'alice', via: 'test' });
    const [a, b] = await Promise.all([rt.connectEndpoint('rt-late'), rt.connectEndpoint(late.endpointId)]);
    await disclosed;
    expect(a).toBe(b);
    expect(rt.attached.filter((id) => id === late.endpointId)).toHaveLength(1);
    const res = await rt.engine.invoke({
      endpointId: late.endpointId,
      deviceId: 'thermostat',
      capabilityId: 'cap.thermal.read.v1',
      input: {},
    });
    expect(res.receipt.status).toBe('completed');
    // HOST-036: the runtime keeps session snapshots in the store, for a restarted host to reuse or reopen.
    await vi.waitFor(async () =>
      expect(
        await rt.db.all('SELECT session_id FROM endpoint_sessions WHERE endpoint_id = ?', [late.endpointId]),
      ).toEqual([{ session_id: res.receipt.session_id }]),
    );
  }, 60_000);

  it('HOST-032: the engine decides with the policy gate: an R2 call waits as a pending approval until withdrawn', async () => {
    const abort = new AbortController();
    const requested = new Promise<string>((resolve) => {
      const off = rt.services.events.subscribe((e) => {
        if (e.type === 'approval.requested') {
          off();
          resolve((e.data.approval as { approval_id: string }).approval_id);
        }
      });
    });
    const call = rt.engine.invoke({
      endpointId: host.sims.lh.endpointId,
      deviceId: 'liquid-handler',
      capabilityId: 'cap.liquid.aspirate.v1',
      input: { volume_ul: 10 },
      signal: abort.signal,
    });
    const id = await requested;
    expect(await rt.services.gate.get(id)).toMatchObject({
      status: 'pending',
      risk_class: 'R2',
      permit_required: true,
    });
    abort.abort();
    expect((await failure(call)).code).toBe(ErrorCode.HOST_APPROVAL_REQUIRED);
  }, 60_000);

  it('HOST-082 HOST-091: a lost endpoint fails fast before sending, reconnects by itself, and calls complete again', async () => {
    const step = {
      endpointId: host.sims.conveyor.endpointId,
      deviceId: 'conveyor-workcell',
      capabilityId: 'cap.world.step.v1',
      input: { ticks: 1 },
    };
    expect((await rt.engine.invoke(step)).receipt.status).toBe('completed');
    const ep = rt.engine.endpoint(step.endpointId)!;
    const port = Number(new URL(host.sims.conveyor.url).port);
    host.sims.conveyor.kill('SIGKILL');
    await host.sims.conveyor.exited;
    await status(ep, 'disconnected');
    // Refused before sending: by the lane (endpoint away) or by the policy gate (its fresh safety read failed).
    const lost = await failure(rt.engine.invoke(step));
    expect([ErrorCode.TRANSPORT_DISCONNECTED, ErrorCode.SAFETY_INTERLOCK_UNKNOWN]).toContain(lost.code);
    restarted.push(await simOnPort('conveyor', port));
    await status(ep, 'connected');
    expect((await rt.engine.invoke(step)).receipt.status).toBe('completed');
  }, 90_000);
});
