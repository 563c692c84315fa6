// Guarantees (HOST-093 for the host lease, HOST-091): in the host runtime `serve` opens, on a real SQLite file, a
// lease renewal the store refuses (the file locked by another connection) is not dropped: it reaches the runtime's
// onBackgroundError, which `serve` wires to its log, as one error line with code MHS.HOST.LEDGER_UNAVAILABLE; the
// ledger's status turns unavailable and the operator's ledger view (`GET /v1/operator/ledger`) shows it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { createHostLog, logBackgroundError } from '../../src/cli/host-log.js';
import { ErrorCode, SimulatedClock } from '../../src/core/index.js';
import { openHostRuntime } from '../../src/engine/host-runtime.js';
import type { HostRuntime } from '../../src/engine/host-runtime.js';
import { openDb } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/index.js';
import { registerOperatorRoutes } from '../../src/server/operator-routes.js';
import type { OperatorRoutesDeps } from '../../src/server/operator-routes.js';

const dir = mkdtempSync(join(tmpdir(), 'mhs-lease-errors-'));
const file = join(dir, 'host.db');
let db: Db | undefined;
let rt: HostRuntime | undefined;
let locker: Database.Database | undefined;

afterAll(async () => {
  locker?.close();
  await rt?.close();
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function until(pred: () => boolean): Promise<void> {
  while (!pred()) await new Promise((r) => setTimeout(r, 5));
}

describe('lease renewal failures in the host runtime', () => {
  it('HOST-093: reach the log with a stable code and the operator ledger view shows the store unavailable', async () => {
    const lines: string[] = [];
    const log = createHostLog({ write: (s: string) => void lines.push(s) });
    const clock = new SimulatedClock(1_700_000_000_000);
    // A short busy timeout, so the locked store refuses the renewal at once.
    db = await openDb(file, { sqlite: { busyTimeoutMs: 50 } });
    rt = await openHostRuntime({ db, clock, onBackgroundError: logBackgroundError(log) });
    // An effectful intent claims its device gate, which takes this process's lease (renewed every 10 s).
    await rt.ledger.appendBatch(
      [
        {
          kind: 'command.intent',
          command_id: 'cmd_lease_1',
          endpoint_id: 'mhs://lease/ep',
          device_id: 'dev-a',
          capability_id: 'cap.x.v1',
          input_digest: 'sha256:0',
          input: {},
          effect: 'actuate',
        },
      ],
      { claimGates: true },
    );
    expect(await db.all('SELECT owner FROM host_leases')).toHaveLength(1);

    locker = new Database(file);
    locker.exec('BEGIN IMMEDIATE');
    clock.advance(10_000);
    await until(() => lines.some((l) => l.includes('lease_renewal')));
    locker.exec('ROLLBACK');

    const line = JSON.parse(lines.find((l) => l.includes('lease_renewal'))!) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: 50,
      name: 'mhs-host',
      code: ErrorCode.HOST_LEDGER_UNAVAILABLE,
      details: { operation: 'lease_renewal', store_code: 'SQLITE_BUSY', location: file },
      retryable: true,
    });
    expect(String(line.msg)).toContain('the ledger store cannot be written');
    expect(rt.ledger.status()).toMatchObject({
      state: 'unavailable',
      last_error: { code: ErrorCode.HOST_LEDGER_UNAVAILABLE },
    });

    const app = Fastify();
    await registerOperatorRoutes(app, rt.operatorDeps() as unknown as OperatorRoutesDeps);
    const { token } = await rt.services.tokens.add('lease-op', 'operator');
    const res = await app.inject({
      method: 'GET',
      url: '/v1/operator/ledger',
      headers: { authorization: `Bearer ${token}` },
    });
    await app.close();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      status: { state: 'unavailable', last_error: { code: ErrorCode.HOST_LEDGER_UNAVAILABLE } },
    });
  });
});
