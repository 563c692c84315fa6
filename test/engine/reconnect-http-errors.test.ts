// Guarantees (HOST-091, HOST-082) for the connector over HTTP, against a real simulator process: a call to an
// endpoint whose server is gone is a pre-send MHS.TRANSPORT.DISCONNECTED (sent:false: the TCP connect was refused,
// nothing left the host), a request lost mid-flight is DISCONNECTED with sent:true (ambiguous, so the engine makes
// it MHS.OUTCOME.UNKNOWN), and a plain connection (no reconnect wrapper) outlives a server restart on the same port.
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, test } from 'vitest';
import { ErrorCode, HostError } from '../../src/core/index.js';
import { connect } from '../../src/mhs/connector.js';
import { cliEntry } from '../helpers/cli-entry.js';
import { REPO_ROOT, startSimHttp } from '../helpers/sim.js';
import { httpRow } from './harness.js';

const cleanup: Array<() => void> = [];
afterAll(() => cleanup.forEach((f) => f()));

function simOnPort(port: number): Promise<void> {
  const child = spawn(process.execPath, [...cliEntry().args, 'sim', 'conveyor', '--http', String(port)], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  cleanup.push(() => child.kill('SIGKILL'));
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c: string) => {
      err += c;
      if (err.includes('listening ')) resolve();
    });
    child.once('exit', () => reject(new Error(err)));
  });
}

async function failure(p: Promise<unknown>): Promise<HostError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(HostError);
  return e as HostError;
}

describe('HTTP transport failures', () => {
  test('HOST-091: refused connect is pre-send, lost request is sent; a plain connection outlives a restart', async () => {
    const sim = await startSimHttp('conveyor', ['--stall', '1']);
    cleanup.push(() => sim.kill());
    const conn = await connect(httpRow(sim.mcpUrl, sim.endpointId, 'mhs-http-errors'));
    let closed = false;
    void conn.closed.then(() => (closed = true));
    const open = await conn.callTool('mhs__session', {
      action: 'open',
      device_id: 'conveyor-workcell',
      capabilities: ['cap.world.step.v1'],
      ttl_ms: 60_000,
      principal: { kind: 'agent', id: 'host:test' },
      mode: 'live',
    });
    const sessionId = open.structuredContent.session_id as string;
    const stalled = failure(
      conn.callTool(
        'mhs__cap__conveyor-workcell__cap_world_step_v1',
        { ticks: 1, _mhs: { session_id: sessionId, command_id: 'cmd_01KB0000000000000000000001', deadline_ms: 5_000 } },
        { timeoutMs: 8_000 },
      ),
    );
    await conn.callTool('mhs__devices', {}); // a later round trip: the stalled request is at the server
    sim.kill('SIGKILL');
    await sim.exited;
    const lost = await stalled;
    expect(lost.code).toBe(ErrorCode.TRANSPORT_DISCONNECTED);
    expect(lost.details.sent).toBe(true);

    const refused = await failure(conn.callTool('mhs__devices', {}));
    expect(refused.code).toBe(ErrorCode.TRANSPORT_DISCONNECTED);
    expect(refused.details.sent).toBe(false);
    expect(refused.retryable).toBe(true);

    await simOnPort(Number(new URL(sim.url).port));
    expect((await conn.callTool('mhs__devices', {})).isError).toBe(false);
    expect(closed).toBe(false);
    await conn.close();
  });
});
