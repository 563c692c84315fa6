// Guarantees (issue 18 item 1, HOST-082), against a real host runtime over a real HTTP simulator with the idle
// probe switched off: when the devices feed's safety read over the operator route fails because the endpoint was
// killed (SIGKILL), the feed reports it and the engine's reconnecting connection checks itself at once, so the
// pushed snapshot shows the endpoint reconnecting (nothing else would notice: no call, no idle probe); once the
// simulator is back on the same port the host reconnects by itself and the feed pushes it connected with its
// safety status read again. The feed only reports; the connection decides.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHostRuntime } from '../../src/engine/host-runtime.js';
import type { HostRuntime } from '../../src/engine/host-runtime.js';
import { createDeviceFeed } from '../../src/server/device-feed.js';
import type { DeviceFeedDeps, EndpointView } from '../../src/server/device-feed.js';
import { startMhsHost } from '../helpers/mhs-host.js';
import type { MhsHost } from '../helpers/mhs-host.js';
import { simOnPort } from '../helpers/sim.js';
import type { RestartedSim } from '../helpers/sim.js';

let host: MhsHost<'cv'>;
let rt: HostRuntime;
let restarted: RestartedSim | undefined;

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
  await rt?.close();
  restarted?.kill();
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
