// Guarantees (issue 18 item 1, HOST-082), against a real host runtime over a real HTTP simulator with the idle
// probe switched off: when the devices feed's safety read over the operator route fails because the endpoint was
// killed (SIGKILL), the feed reports it and the engine's reconnecting connection checks itself at once, so the
// pushed snapshot shows the endpoint reconnecting (nothing else would notice: no call, no idle probe); once the
// simulator is back on the same port the host reconnects by itself and the feed pushes it connected with its
// safety status read again. The feed only reports; the connection decides. A reset sent over the operator API to
// an endpoint that was killed fails with a transport code and, likewise, makes the engine see it disconnected.
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHostRuntime } from '../../src/engine/host-runtime.js';
import type { HostRuntime } from '../../src/engine/host-runtime.js';
import { createDeviceFeed } from '../../src/server/device-feed.js';
import type { DeviceFeedDeps, EndpointView } from '../../src/server/device-feed.js';
import { registerOperatorRoutes } from '../../src/server/operator-routes.js';
import type { OperatorRoutesDeps } from '../../src/server/operator-routes.js';
import { startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { simOnPort } from '../helpers/sim.js';
import type { RestartedSim } from '../helpers/sim.js';

let host: MhsHost<'cv'>;
let rt: HostRuntime;
let restarted: RestartedSim | undefined;
let again: RestartedSim | undefined;
let app: FastifyInstance | undefined;

beforeAll(async () => {
  host = await startMhsHost({ prefix: 'probe', sims: { cv: ['conveyor', ['--operator-tools']] }, serve: false });
  rt = await openHostRuntime({
    db: host.dbPath,
    attachEnabled: true,
    // No idle probe: only the feed's report can make the host notice the endpoint is gone.
    engine: { probeIntervalMs: 0, reconnect: { initialMs: 50, maxMs: 400 } },
  });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await rt?.close();
  restarted?.kill();
  again?.kill();
  await host?.stop();
});

/** Resolves with the first pushed snapshot whose endpoint `pred` accepts. */
function pushed(feed: ReturnType<typeof createDeviceFeed>, pred: (e: EndpointView) => boolean): Promise<EndpointView> {
  return new Promise((resolve) => {
    const off = feed.subscribe((list) => {
      const e = list.find((x) => x.connector_id === host.connectors.cv);
      if (e && pred(e)) {
        off();
        resolve(e);
      }
    });
  });
}

describe('the devices feed reports a failed safety read to the endpoint connection', () => {
  it('a killed endpoint is pushed reconnecting without an idle probe, then connected when it is back', async () => {
    expect(rt.failed).toEqual([]);
    const feed = createDeviceFeed({ ...(rt.operatorDeps() as unknown as DeviceFeedDeps), safetyPollMs: 100 });
    const up = await pushed(feed, (e) => e.connection.state === 'connected' && e.devices.some((d) => d.safety));
    expect(up.devices[0]!.safety).toMatchObject({ estop: { engaged: false } });

    const port = Number(new URL(host.sims.cv.url).port);
    const down = pushed(feed, (e) => e.connection.state === 'reconnecting');
    host.sims.cv.kill('SIGKILL');
    await host.sims.cv.exited;
    const seen = await down;
    expect(seen.connection).toMatchObject({ code: 'MHS.TRANSPORT.DISCONNECTED' });
    expect(seen.connection.reason).toMatch(/unreachable/);
    expect(seen.devices.map((d) => d.safety)).toEqual([null]);

    const back = pushed(
      feed,
      (e) => e.connection.state === 'connected' && e.devices.every((d) => d.safety && !('error' in d.safety)),
    );
    restarted = await simOnPort('conveyor', port, ['--operator-tools']);
    const again = await back;
    expect(again.devices[0]!.safety).toMatchObject({ estop: { engaged: false } });
  }, 90_000);
});

describe('the operator API reports a reset that could not reach the endpoint', () => {
  it('a reset to a killed endpoint fails with a transport code, and the engine sees the endpoint disconnected', async () => {
    const ep = rt.engine.endpoint(host.sims.cv.endpointId)!;
    await firstValueFrom(ep.status$.pipe(filter((s) => s === 'connected')));
    app = Fastify({ forceCloseConnections: true });
    await registerOperatorRoutes(app, rt.operatorDeps() as unknown as OperatorRoutesDeps);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const addr = app.server.address();
    const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    const token = (await rt.services.tokens.add('probe-op', 'operator')).token;

    const port = Number(new URL(host.sims.cv.url).port);
    // The endpoint reads its safety status once more, so the operator route's connection is open and cached.
    const feed = createDeviceFeed({ ...(rt.operatorDeps() as unknown as DeviceFeedDeps) });
    expect((await feed.snapshot())[0]!.devices[0]!.safety).toMatchObject({ estop: { engaged: false } });
    const gone = firstValueFrom(ep.status$.pipe(filter((s) => s === 'disconnected')));
    restarted!.kill();
    await restarted!.exited;
    const res = await fetch(`${url}/v1/operator/reset`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ endpoint_id: host.sims.cv.endpointId, device_id: 'conveyor-workcell' }),
    });
    expect(res.status).toBe(200);
    const out = (await res.json()) as { status: string; error?: { mhs_code: string } };
    expect(out.status).toBe('error');
    expect(out.error?.mhs_code).toMatch(/^MHS\.TRANSPORT\./);
    await gone;
    expect(ep.lastDrop).toMatchObject({ code: 'MHS.TRANSPORT.DISCONNECTED', terminal: false });
    again = await simOnPort('conveyor', port, ['--operator-tools']);
    await firstValueFrom(ep.status$.pipe(filter((s) => s === 'connected')));
  }, 90_000);
});
