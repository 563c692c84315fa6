// Guarantees (HOST-082, 091, 036, 012, 073), against real simulator processes: when an attached endpoint's
// connection dies (HTTP server killed, stdio child SIGKILLed) its actor goes disconnected, calls to it fail fast
// before sending (MHS.TRANSPORT.DISCONNECTED, sent:false, retryable, recorded command.not_sent), other endpoints
// in the same engine keep working, and the host reconnects by itself with backoff. A command in flight when the
// connection died is MHS.OUTCOME.UNKNOWN, keeps its device gate shut and is reconciled after the reconnect before
// that device takes another command; sessions of the old connection are reopened on next use (never a blind
// resend); every command executes at most once. An endpoint that comes back with another manifest is re-admitted
// (new disclosure) or, when the host is told to, refused and left disconnected with MHS.HOST.MANIFEST_INVALID.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ErrorCode, HostError } from '../../src/core/index.js';
import type { Engine, EndpointActor, EndpointStatus, InvokeResult } from '../../src/engine/index.js';
import type { ReconnectEvent } from '../../src/mhs/reconnect.js';
import { simOnPort, simStdioCommand, startSimHttp } from '../helpers/sim.js';
import type { RestartedSim, SimHttp } from '../helpers/sim.js';
import { executions, httpRow, openStore, startEngine, stdioRow } from './harness.js';
import type { Store } from './harness.js';

const CONVEYOR = 'conveyor-workcell';
const STEP = 'cap.world.step.v1';

type Restarted = RestartedSim;
type Fixture = { store: Store; engine: Engine; sim: SimHttp; restarted: Restarted[] };

/**
 * One store, one engine and (unless `simFamilies` is null) one HTTP simulator for a describe block, torn down after
 * it together with any simulator the block restarted on the same port.
 */
function fixture(
  engineOpts: Parameters<typeof startEngine>[1],
  simFamilies: string | null = 'conveyor',
  simFlags: string[] = [],
): Fixture {
  const f = { restarted: [] } as unknown as Fixture;
  beforeAll(async () => {
    f.store = await openStore();
    f.engine = await startEngine(f.store, engineOpts);
    if (simFamilies) f.sim = await startSimHttp(simFamilies, simFlags);
  });
  afterAll(async () => {
    await f.engine?.stop();
    await f.store?.close();
    await f.sim?.stop();
    for (const r of f.restarted) r.kill();
  });
  return f;
}

/** A TCP proxy in front of a simulator: `cut()` drops every connection and stops listening; `start(port)` again. */
function tcpProxy(targetPort: number) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  return {
    get port() {
      return port;
    },
    start: (p = 0) =>
      new Promise<number>((resolve) => {
        server = net.createServer((client) => {
          const up = net.connect(targetPort, '127.0.0.1');
          const done = () => {
            client.destroy();
            up.destroy();
            sockets.delete(client);
            sockets.delete(up);
          };
          for (const s of [client, up]) sockets.add(s.on('error', done).on('close', done));
          client.pipe(up).pipe(client);
        });
        server.listen(p, '127.0.0.1', () => resolve((port = (server!.address() as AddressInfo).port)));
      }),
    cut: () =>
      new Promise<void>((resolve) => {
        server?.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

function portOf(sim: SimHttp): number {
  return Number(new URL(sim.url).port);
}

async function failure(p: Promise<unknown>): Promise<HostError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(HostError);
  return e as HostError;
}

function status(ep: EndpointActor, want: EndpointStatus): Promise<EndpointStatus> {
  return firstValueFrom(ep.status$.pipe(filter((s) => s === want)));
}

/** Resolves once the lane of `ep` has a job running (the call left the governed path for the transport). */
async function running(ep: EndpointActor): Promise<void> {
  // Bounded by time, not by turns of the event loop: under load the intent's fsync alone can outlast 2,000 turns.
  const until = Date.now() + 20_000;
  while (ep.laneStats().running === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 2));
  expect(ep.laneStats().running).toBeGreaterThan(0);
}

describe('reconnect over HTTP (real sim killed and restarted on the same port)', () => {
  const events: ReconnectEvent[] = [];
  const background: HostError[] = [];
  const f = fixture(
    {
      transportMarginMs: 500,
      reconnect: { initialMs: 50, maxMs: 400 },
      onEndpointEvent: (_id, e) => events.push(e),
      onBackgroundError: (e) => background.push(e),
    },
    'conveyor,thermostat',
    ['--stall', '3'],
  );

  test('HOST-091 HOST-036 HOST-082: in-flight call UNKNOWN, reconnect by itself, reconciled before the device runs again, executed at most once', async () => {
    const ep = await f.engine.connect(httpRow(f.sim.mcpUrl, f.sim.endpointId, 'mhs-reconnect-http'));
    const EP = ep.endpointId;
    const call = { endpointId: EP, deviceId: CONVEYOR, capabilityId: STEP, deadlineMs: 4_000 };
    const read = await f.engine.invoke({
      endpointId: EP,
      deviceId: 'thermostat',
      capabilityId: 'cap.thermal.read.v1',
      input: {},
    });
    expect(read.receipt.status).toBe('completed');
    const ok = await f.engine.invoke({ ...call, input: { ticks: 1 } });
    expect(ok.receipt.status).toBe('completed');
    expect(await executions(f.engine, EP, CONVEYOR, ok.commandId)).toBe(1);

    // The third capability call stalls at the endpoint: it is in flight when the server dies.
    const inflight = failure(f.engine.invoke({ ...call, input: { ticks: 2 } }));
    await running(ep);
    await f.engine.read(EP, CONVEYOR); // a later round trip on the same connection: the stalled request is out
    const down = status(ep, 'disconnected');
    f.sim.kill('SIGKILL');
    const unknown = await inflight;
    expect(unknown.code).toBe(ErrorCode.OUTCOME_UNKNOWN);
    const lost = unknown.details.command_id as string;
    await down;

    // Down: the device with the unknown command is gated; another device fails fast before sending.
    expect((await failure(f.engine.invoke({ ...call, input: { ticks: 1 } }))).code).toBe(
      ErrorCode.HOST_DEVICE_GATE_CLOSED,
    );
    const away = await failure(
      f.engine.invoke({ endpointId: EP, deviceId: 'thermostat', capabilityId: 'cap.thermal.read.v1', input: {} }),
    );
    expect(away.code).toBe(ErrorCode.TRANSPORT_DISCONNECTED);
    expect(away.retryable).toBe(true);
    expect(away.details.sent).toBe(false);
    expect((await f.store.ledger.byCommand(away.details.command_id as string)).map((e) => e.kind)).toEqual([
      'command.intent',
      'command.not_sent',
    ]);

    // Back on the same port (no faults this time): the host reconnects by itself and reconciles first.
    const back = status(ep, 'connected');
    f.restarted.push(await simOnPort('conveyor,thermostat', portOf(f.sim)));
    await back;
    expect(events.map((e) => e.type)).toContain('reconnected');
    // Issue 16: "no record" proves nothing before the deadline; the re-armed reconciliation settles it after.
    await f.engine.reconcile({ commandId: lost, untilSettled: true });
    expect(f.engine.pending()).toEqual([]);
    const kinds = (await f.store.ledger.byCommand(lost)).map((e) => e.kind);
    expect(kinds.slice(0, 3)).toEqual(['command.intent', 'command.unknown', 'reconcile']);
    expect(new Set(kinds.slice(2))).toEqual(new Set(['reconcile']));
    const rec = (await f.store.ledger.byCommand(lost)).at(-1)!;
    expect(rec).toMatchObject({ outcome: 'not_executed', method: 'operations' });
    expect(await executions(f.engine, EP, CONVEYOR, lost)).toBe(0);

    // The next call succeeds on a reopened session (HOST-036), not the old one.
    const next: InvokeResult = await f.engine.invoke({ ...call, input: { ticks: 1 } });
    expect(next.receipt.status).toBe('completed');
    expect(next.receipt.session_id).not.toBe(ok.receipt.session_id);
    expect(await executions(f.engine, EP, CONVEYOR, next.commandId)).toBe(1);
    const reopened = (await f.store.ledger.range(0)).filter(
      (e) => e.kind === 'session.open' && e.reopened_from === ok.receipt.session_id,
    );
    expect(reopened).toHaveLength(1);
    expect(background).toEqual([]);
  });
});

describe('reconnect after a network cut (the endpoint kept running)', () => {
  const f = fixture({ transportMarginMs: 500, reconnect: { initialMs: 50, maxMs: 400 } }, 'conveyor', [
    '--drop-reply',
    '2',
  ]);

  test('HOST-091: a command executed but unanswered when the link dropped is settled by a same-id retry (replayed:true), executed once', async () => {
    const proxy = tcpProxy(portOf(f.sim));
    await proxy.start();
    const ep = await f.engine.connect(
      httpRow(`http://127.0.0.1:${proxy.port}/mcp`, f.sim.endpointId, 'mhs-reconnect-cut'),
    );
    const EP = ep.endpointId;
    const call = { endpointId: EP, deviceId: CONVEYOR, capabilityId: STEP, deadlineMs: 4_000 };
    expect((await f.engine.invoke({ ...call, input: { ticks: 1 } })).receipt.status).toBe('completed');
    // The second capability call executes at the endpoint and its reply is dropped.
    const inflight = failure(f.engine.invoke({ ...call, input: { ticks: 2 } }));
    await running(ep);
    const lost = f.engine.pending()[0]!.commandId;
    while ((await executions(f.engine, EP, CONVEYOR, lost)) === 0) await new Promise((r) => setImmediate(r));
    const down = status(ep, 'disconnected');
    await proxy.cut();
    const unknown = await inflight;
    expect(unknown.code).toBe(ErrorCode.OUTCOME_UNKNOWN);
    expect(unknown.details.command_id).toBe(lost);
    await down;
    const back = status(ep, 'connected');
    await proxy.start(proxy.port);
    await back;
    expect(f.engine.pending()).toEqual([]);
    const entries = await f.store.ledger.byCommand(lost);
    expect(entries.map((e) => e.kind)).toEqual(['command.intent', 'command.unknown', 'receipt', 'reconcile']);
    expect(entries.at(-1)).toMatchObject({ outcome: 'receipt', method: 'retry', replayed: true, status: 'completed' });
    expect(await executions(f.engine, EP, CONVEYOR, lost)).toBe(1);
    const next = await f.engine.invoke({ ...call, input: { ticks: 1 } });
    expect(next.receipt.status).toBe('completed');
    expect(await executions(f.engine, EP, CONVEYOR, next.commandId)).toBe(1);
    await proxy.cut();
  });
});

describe('reconnect over stdio (child SIGKILLed)', () => {
  const f = fixture({ transportMarginMs: 500, reconnect: { initialMs: 50, maxMs: 400 } }, null);

  test('HOST-091 HOST-082: killed child is respawned, the in-flight command is reconciled, calls succeed again', async () => {
    const c = simStdioCommand('conveyor', ['--stall', '2']);
    const ep = await f.engine.connect(stdioRow('conveyor', ['--stall', '2'], 'mhs-reconnect-stdio'), {
      cwd: c.cwd,
      stderr: 'ignore',
    });
    const EP = ep.endpointId;
    const call = { endpointId: EP, deviceId: CONVEYOR, capabilityId: STEP, deadlineMs: 4_000 };
    expect((await f.engine.invoke({ ...call, input: { ticks: 1 } })).receipt.status).toBe('completed');
    const pid = ep.childPid!;
    const inflight = failure(f.engine.invoke({ ...call, input: { ticks: 2 } }));
    await running(ep);
    await f.engine.read(EP, CONVEYOR);
    const down = status(ep, 'disconnected');
    process.kill(pid, 'SIGKILL');
    const unknown = await inflight;
    expect(unknown.code).toBe(ErrorCode.OUTCOME_UNKNOWN);
    await down;
    await status(ep, 'connected');
    expect(ep.childPid).not.toBe(pid);
    const lost = unknown.details.command_id as string;
    // Issue 16: settled not_executed only once its deadline has passed.
    await f.engine.reconcile({ commandId: lost, untilSettled: true });
    expect(f.engine.pending()).toEqual([]);
    const lostEntries = await f.store.ledger.byCommand(lost);
    expect(lostEntries.map((e) => e.kind).slice(0, 3)).toEqual(['command.intent', 'command.unknown', 'reconcile']);
    expect(lostEntries.at(-1)).toMatchObject({ kind: 'reconcile', outcome: 'not_executed' });
    const next = await f.engine.invoke({ ...call, input: { ticks: 1 } });
    expect(next.receipt.status).toBe('completed');
    expect(await executions(f.engine, EP, CONVEYOR, next.commandId)).toBe(1);
    expect(await executions(f.engine, EP, CONVEYOR, lost)).toBe(0);
  });
});

describe('one endpoint down, another up (same engine)', () => {
  const f = fixture({ transportMarginMs: 500, reconnect: { initialMs: 50, maxMs: 400 } }, 'conveyor');

  test('HOST-082: while one endpoint is down the other completes its calls; HOST-012 a changed manifest is re-admitted', async () => {
    const c = simStdioCommand('conveyor');
    const [down, up] = await Promise.all([
      f.engine.connect(httpRow(f.sim.mcpUrl, f.sim.endpointId, 'mhs-down')),
      f.engine.connect(stdioRow('conveyor', [], 'mhs-up'), { cwd: c.cwd, stderr: 'ignore' }),
    ]);
    const firstDigest = down.manifest.manifest_digest;
    const gone = status(down, 'disconnected');
    f.sim.kill('SIGKILL');
    await f.sim.exited;
    // HTTP has no connection to watch: the next call finds the endpoint gone, before sending anything.
    const refused = await failure(
      f.engine.invoke({ endpointId: down.endpointId, deviceId: CONVEYOR, capabilityId: STEP, input: { ticks: 1 } }),
    );
    expect(refused.code).toBe(ErrorCode.TRANSPORT_DISCONNECTED);
    expect(refused.retryable).toBe(true);
    expect(refused.details.command_id).toBeUndefined(); // refused at the session open: no command existed
    await gone;
    for (let i = 0; i < 3; i++) {
      const r = await f.engine.invoke({
        endpointId: up.endpointId,
        deviceId: CONVEYOR,
        capabilityId: STEP,
        input: { ticks: 1 },
      });
      expect(r.receipt.status).toBe('completed');
    }
    expect(down.status$.value).toBe('disconnected');

    // It comes back with another device set: admitted again, and the new manifest is disclosed.
    const back = status(down, 'connected');
    f.restarted.push(await simOnPort('conveyor,thermostat', portOf(f.sim)));
    await back;
    expect(down.manifest.manifest_digest).not.toBe(firstDigest);
    const disclosures = (await f.store.ledger.range(0)).filter(
      (e) => e.kind === 'disclosure' && e.endpoint_id === down.endpointId,
    );
    expect(disclosures.map((e) => e.manifest_digest)).toEqual([firstDigest, down.manifest.manifest_digest]);
    const r = await f.engine.invoke({
      endpointId: down.endpointId,
      deviceId: 'thermostat',
      capabilityId: 'cap.thermal.read.v1',
      input: {},
    });
    expect(r.receipt.status).toBe('completed');
  });
});

describe('an idle HTTP endpoint that goes away', () => {
  const f = fixture({ probeIntervalMs: 100, reconnect: { initialMs: 50, maxMs: 400 } }, 'conveyor');

  test('HOST-082: the idle probe sees it gone without a call, and the host reconnects once it is back', async () => {
    const ep = await f.engine.connect(httpRow(f.sim.mcpUrl, f.sim.endpointId, 'mhs-idle'));
    const first = await f.engine.invoke({
      endpointId: ep.endpointId,
      deviceId: CONVEYOR,
      capabilityId: STEP,
      input: { ticks: 1 },
    });
    const gone = status(ep, 'disconnected');
    f.sim.kill('SIGKILL');
    await gone;
    expect(ep.lastDrop).toMatchObject({ code: ErrorCode.TRANSPORT_DISCONNECTED, terminal: false });
    const back = status(ep, 'connected');
    f.restarted.push(await simOnPort('conveyor', portOf(f.sim)));
    await back;
    const next = await f.engine.invoke({
      endpointId: ep.endpointId,
      deviceId: CONVEYOR,
      capabilityId: STEP,
      input: { ticks: 1 },
    });
    expect(next.receipt.status).toBe('completed');
    expect(next.receipt.session_id).not.toBe(first.receipt.session_id);
  });
});

describe('a changed manifest refused on reconnect', () => {
  const f = fixture(
    {
      onManifestChange: 'refuse',
      reconnect: { initialMs: 50, maxMs: 400 },
    },
    'conveyor',
  );

  test('HOST-073 HOST-012: refused, stays disconnected with MHS.HOST.MANIFEST_INVALID', async () => {
    const ep = await f.engine.connect(httpRow(f.sim.mcpUrl, f.sim.endpointId, 'mhs-refuse'));
    const gone = status(ep, 'disconnected');
    f.sim.kill('SIGKILL');
    await f.sim.exited;
    await failure(f.engine.read(ep.endpointId, CONVEYOR));
    await gone;
    f.restarted.push(await simOnPort('conveyor,thermostat', portOf(f.sim)));
    await firstValueFrom(ep.status$.pipe(filter(() => ep.lastDrop?.terminal === true)));
    expect(ep.lastDrop?.code).toBe(ErrorCode.HOST_MANIFEST_INVALID);
    const e = await failure(
      f.engine.invoke({ endpointId: ep.endpointId, deviceId: CONVEYOR, capabilityId: STEP, input: { ticks: 1 } }),
    );
    expect(e.code).toBe(ErrorCode.HOST_MANIFEST_INVALID);
    expect(e.retryable).toBe(false);
    expect(ep.status$.value).toBe('disconnected');
  });
});
