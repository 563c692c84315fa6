// Guarantees, against real simulator processes (stdio children and HTTP servers, several at once):
// both MCP revisions negotiate; a disabled connector spawns no child and opens no socket (counted);
// credentials are per endpoint and stdio endpoints are `local`; an oversized reply is refused with
// FRAME_TOO_LARGE and a killed child is reported DISCONNECTED while other endpoints keep serving;
// the connection comes back with backoff and reports a changed manifest (HOST-011, 012, 063, 068).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, HostError } from '../../src/core/index.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { connect } from '../../src/mhs/connector.js';
import type { ConnectOptions, MhsConnection } from '../../src/mhs/connector.js';
import { connectWithReconnect } from '../../src/mhs/reconnect.js';
import type { ReconnectEvent } from '../../src/mhs/reconnect.js';
import { ManifestCache } from '../../src/mhs/manifest-cache.js';
import type { ConnectorRow } from '../../src/mhs/connector-row.js';
import { REPO_ROOT, simStdioCommand, startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';
import { startHttpProbe } from './helpers/http-probe.js';

const stdioRow = (families: string, flags: string[] = [], over: Partial<ConnectorRow> = {}): ConnectorRow => {
  const s = simStdioCommand(families, flags);
  return {
    connector_id: `mhs-test-${families}`,
    transport: 'stdio',
    command: [s.command, ...s.args],
    endpoint_id: null,
    enabled: true,
    source: { kind: 'env', ref: 'MHS_ENDPOINTS' },
    auth: { scheme: 'local' },
    ...over,
  };
};
const httpRow = (url: string, over: Partial<ConnectorRow> = {}): ConnectorRow => ({
  connector_id: 'mhs-test-http',
  transport: 'http',
  url,
  endpoint_id: null,
  enabled: true,
  source: { kind: 'env', ref: 'MHS_ENDPOINTS' },
  auth: { scheme: 'none' },
  ...over,
});
// Generous deadlines: a stdio child loads the CLI before it answers (slow on a loaded CI box).
const stdioOpts: ConnectOptions = { cwd: REPO_ROOT, timeoutMs: 90_000 };

async function failure(p: Promise<unknown>): Promise<HostError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof HostError) return e;
    throw e;
  }
  throw new Error('expected a rejection');
}

function childPids(): number[] {
  const out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((s) => Number(s.trim()))
    .filter((n) => n > 0);
}

describe('connector against the reference simulators', { timeout: 180_000 }, () => {
  let laser: SimHttp;
  let thermoOversize: SimHttp;
  const open: MhsConnection[] = [];
  beforeAll(async () => {
    [laser, thermoOversize] = await Promise.all([
      startSimHttp('laser'),
      startSimHttp('thermostat', ['--oversize-reply', '--time-scale', '1000']),
    ]);
  });
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => undefined)));
    await Promise.all([laser?.stop(), thermoOversize?.stop()]);
  });
  const keep = <T extends MhsConnection>(c: T) => (open.push(c), c);

  it('negotiates 2026-07-28 when offered and 2025-11-25 when asked for legacy, over HTTP and stdio', async () => {
    const [h1, h2, s1, s2] = await Promise.all([
      connect(httpRow(laser.mcpUrl)),
      connect(httpRow(laser.mcpUrl), { protocol: 'legacy' }),
      connect(stdioRow('conveyor'), stdioOpts),
      connect(stdioRow('conveyor'), { ...stdioOpts, protocol: 'legacy' }),
    ]);
    expect([h1.protocolVersion, h2.protocolVersion, s1.protocolVersion, s2.protocolVersion]).toEqual([
      '2026-07-28',
      '2025-11-25',
      '2026-07-28',
      '2025-11-25',
    ]);
    expect(h1.endpointId).toBe(laser.endpointId);
    // HOST-011: a stdio child is recorded as auth "local".
    expect(s1.auth).toBe('local');
    expect(s1.pid).toBeGreaterThan(0);
    for (const c of [h1, h2, s1, s2]) expect((await c.callTool('mhs__devices', {})).isError).toBe(false);
    await Promise.all([h1, h2, s1, s2].map((c) => c.close()));
  });

  it('HOST-068: a disabled connector spawns no child process and opens no socket (counted)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mhs-disabled-'));
    const marker = join(dir, 'spawned');
    const before = childPids().length;
    const row: ConnectorRow = {
      ...stdioRow('conveyor'),
      enabled: false,
      command: [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`],
    };
    expect((await failure(connect(row))).code).toBe(ErrorCode.HOST_CONNECTOR_DISABLED);
    expect((await failure(connect({ ...row, enabled: true }, { isEnabled: () => false }))).code).toBe(
      ErrorCode.HOST_CONNECTOR_DISABLED,
    );
    expect(existsSync(marker)).toBe(false);
    expect(childPids().length).toBe(before);

    const probe = await startHttpProbe(laser.url);
    try {
      const disabled = httpRow(`${probe.url}/mcp`, { enabled: false });
      expect((await failure(connect(disabled))).code).toBe(ErrorCode.HOST_CONNECTOR_DISABLED);
      expect(probe.connections()).toBe(0);
      // The probe does count: the same row enabled opens connections through it.
      const c = await connect({ ...disabled, enabled: true });
      expect(probe.connections()).toBeGreaterThan(0);
      await c.close();
    } finally {
      await probe.close();
    }
  });

  it('HOST-011: each HTTP endpoint gets its own bearer credential, never another one', async () => {
    const [pa, pb] = await Promise.all([startHttpProbe(laser.url), startHttpProbe(laser.url)]);
    try {
      const a = await connect(httpRow(`${pa.url}/mcp`, { auth: { scheme: 'bearer', token: 'token-A' } }));
      const b = await connect(httpRow(`${pb.url}/mcp`, { auth: { scheme: 'bearer', token_env: 'ENDPOINT_B_TOKEN' } }), {
        secrets: { ENDPOINT_B_TOKEN: 'token-B' },
      });
      await Promise.all([a.callTool('mhs__devices', {}), b.callTool('mhs__devices', {})]);
      expect(new Set(pa.authorizations())).toEqual(new Set(['Bearer token-A']));
      expect(new Set(pb.authorizations())).toEqual(new Set(['Bearer token-B']));
      await Promise.all([a.close(), b.close()]);
      const missing = await failure(
        connect(httpRow(`${pa.url}/mcp`, { auth: { scheme: 'bearer', token_env: 'NOPE' } }), { secrets: {} }),
      );
      expect(missing.code).toBe(ErrorCode.AUTH_ENDPOINT_UNTRUSTED);
    } finally {
      await Promise.all([pa.close(), pb.close()]);
    }
  });

  it('HOST-063: an oversized reply is refused with FRAME_TOO_LARGE (HTTP and stdio), a killed child is DISCONNECTED, and every other endpoint keeps serving', async () => {
    const big = keep(await connect(httpRow(thermoOversize.mcpUrl)));
    const other = keep(await connect(httpRow(laser.mcpUrl)));
    // One stdio child: its 1st capability reply is oversized, its 2nd capability call stalls.
    const child = keep(await connect(stdioRow('conveyor', ['--oversize-reply', '1', '--stall', '2']), stdioOpts));
    const setpoint = capabilityToolName('thermostat', 'cap.thermal.setpoint.v1');
    const e1 = await failure(big.callTool(setpoint, { setpoint_c: 25 }));
    expect(e1.code).toBe(ErrorCode.TRANSPORT_FRAME_TOO_LARGE);
    expect(e1.details.bytes).toBeGreaterThan(4 * 1024 * 1024);
    const step = capabilityToolName('conveyor-workcell', 'cap.world.step.v1');
    expect((await failure(child.callTool(step, { ticks: 1 }))).code).toBe(ErrorCode.TRANSPORT_FRAME_TOO_LARGE);
    // The same connections and the other endpoint still answer.
    expect((await big.callTool('mhs__devices', {})).isError).toBe(false);
    expect((await child.callTool('mhs__devices', {})).isError).toBe(false);
    expect((await other.callTool('mhs__devices', {})).isError).toBe(false);

    // Kill the child with a call in flight.
    const inflight = failure(child.callTool(step, { ticks: 1 }, { timeoutMs: 60_000 }));
    // Requests share one pipe in order: once this read is answered the stalled call has reached the child.
    expect((await child.callTool('mhs__devices', {})).isError).toBe(false);
    process.kill(child.pid!, 'SIGKILL');
    await expect(child.closed).resolves.toMatchObject({ code: ErrorCode.TRANSPORT_DISCONNECTED });
    const e = await inflight;
    expect(e.code).toBe(ErrorCode.TRANSPORT_DISCONNECTED);
    expect(e.details.sent).toBe(true);
    expect((await failure(child.callTool('mhs__devices', {}))).code).toBe(ErrorCode.TRANSPORT_DISCONNECTED);
    expect((await other.callTool('mhs__devices', {})).isError).toBe(false);
    expect((await big.callTool('mhs__devices', {})).isError).toBe(false);
  });

  it('reconnects with backoff after the child dies and reports the changed manifest (HOST-012)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mhs-seed-'));
    const seedFile = join(dir, 'seed');
    writeFileSync(seedFile, '1');
    const s = simStdioCommand('conveyor');
    const script = `exec ${JSON.stringify(s.command)} ${s.args.map((a) => JSON.stringify(a)).join(' ')} --seed "$(cat ${JSON.stringify(seedFile)})"`;
    const row = stdioRow('conveyor', [], { command: ['/bin/sh', '-c', script] });
    const events: ReconnectEvent[] = [];
    const conn = await connectWithReconnect(row, {
      ...stdioOpts,
      backoff: { initialMs: 20, maxMs: 200 },
      onEvent: (e) => events.push(e),
    });
    open.push(conn);
    const cache = new ManifestCache();
    const first = cache.put(conn.manifest);
    const firstPid = conn.pid!;
    writeFileSync(seedFile, '2');
    const seen = (type: ReconnectEvent['type']) =>
      new Promise<ReconnectEvent>((resolve) => {
        const t = setInterval(() => {
          const ev = events.find((x) => x.type === type);
          if (ev) {
            clearInterval(t);
            resolve(ev);
          }
        }, 10);
      });
    const down = seen('disconnected');
    const back = seen('reconnected');
    process.kill(firstPid, 'SIGKILL');
    await down;
    // A call made while it is away waits for the new connection instead of failing.
    const during = conn.callTool('mhs__devices', {}, { timeoutMs: 90_000 });
    const ev = await back;
    expect(ev).toMatchObject({
      type: 'reconnected',
      manifestChanged: true,
      previousDigest: first.keys[0]!.manifest_digest,
    });
    expect(events.map((x) => x.type).slice(0, 2)).toEqual(['disconnected', 'reconnecting']);
    expect((await during).isError).toBe(false);
    expect(conn.pid).not.toBe(firstPid);
    const second = cache.put(conn.manifest);
    expect(second.changed).toBe(true);
    expect(second.keys[0]).toMatchObject({ endpoint_id: first.keys[0]!.endpoint_id, device_id: 'conveyor-workcell' });
    expect(second.keys[0]!.manifest_digest).not.toBe(first.keys[0]!.manifest_digest);
    expect(cache.profileForSession(conn.endpointId, 'conveyor-workcell')?.key).toEqual(second.keys[0]);
  });
});
