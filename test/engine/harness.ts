/**
 * Engine test harness: real simulator processes (stdio children through the real connector, or HTTP), a real
 * SQLite ledger in a temp dir, and the engine under test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RealClock } from '../../src/core/index.js';
import type { Clock } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import type { Db, DurableLedger, LedgerOptions } from '../../src/ledger/index.js';
import { connect } from '../../src/mhs/connector.js';
import type { MhsConnection } from '../../src/mhs/connector.js';
import type { ConnectorRow } from '../../src/mhs/connector-row.js';
import { createEngine } from '../../src/engine/index.js';
import type { Engine, EngineOptions } from '../../src/engine/index.js';
import { simStdioCommand } from '../helpers/sim.js';

export interface Store {
  dir: string;
  path: string;
  db: Db;
  ledger: DurableLedger;
  close(): Promise<void>;
}

/** A fresh SQLite store (or the one at `path`) with its ledger. */
export async function openStore(
  path?: string,
  clock: Clock = new RealClock(),
  ledgerOpts: Omit<LedgerOptions, 'clock'> = {},
): Promise<Store> {
  const dir = path ? '' : mkdtempSync(join(tmpdir(), 'mhs-engine-'));
  const file = path ?? join(dir, 'host.db');
  const db = await openDb(file);
  const ledger = await openLedger(db, { ...ledgerOpts, clock });
  return {
    dir,
    path: file,
    db,
    ledger,
    close: async () => {
      await db.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A connector row for a stdio simulator child (enabled: the test is the operator). */
export function stdioRow(
  families: string,
  flags: string[] = [],
  id = `mhs-test-${families.replace(/\W/g, '-')}`,
): ConnectorRow {
  const c = simStdioCommand(families, flags);
  return {
    connector_id: id,
    transport: 'stdio',
    command: [c.command, ...c.args],
    endpoint_id: null,
    enabled: true,
    source: { kind: 'registry', ref: 'test' },
    auth: { scheme: 'local' },
  };
}

/** A connector row for an HTTP simulator. */
export function httpRow(mcpUrl: string, endpointId: string, id = 'mhs-test-http'): ConnectorRow {
  return {
    connector_id: id,
    transport: 'http',
    url: mcpUrl,
    endpoint_id: endpointId,
    enabled: true,
    source: { kind: 'registry', ref: 'test' },
    auth: { scheme: 'none' },
  };
}

/** Connects a simulator over stdio through the real connector. */
export async function connectStdio(families: string, flags: string[] = [], id?: string): Promise<MhsConnection> {
  const c = simStdioCommand(families, flags);
  return connect(stdioRow(families, flags, id), { cwd: c.cwd, stderr: 'ignore' });
}

/** An engine on `store`, started. */
export async function startEngine(store: Store, opts: Partial<EngineOptions> = {}): Promise<Engine> {
  const engine = createEngine({ ledger: store.ledger, ...opts });
  await engine.start();
  return engine;
}

/** Reads an execution counter of a device through the engine's read path (`_counters`, issue 2). */
export async function executions(
  engine: Engine,
  endpointId: string,
  deviceId: string,
  commandId: string,
): Promise<number> {
  const r = await engine.read(endpointId, deviceId, '_counters');
  const state = r.state as Record<string, unknown>;
  const counts = (state.executions ?? state) as Record<string, number>;
  return counts[commandId] ?? 0;
}

/** `db` with every query it answers (and the rows it returned) recorded in `log`, transactions included. */
export function recordingDb(db: Db, log: Array<{ sql: string; rows: number }>): Db {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'all')
        return async (sql: string, params?: readonly unknown[]) => {
          const rows = await target.all(sql, params);
          log.push({ sql, rows: rows.length });
          return rows;
        };
      if (prop === 'get')
        return async (sql: string, params?: readonly unknown[]) => {
          const row = await target.get(sql, params);
          log.push({ sql, rows: row ? 1 : 0 });
          return row;
        };
      if (prop === 'tx') return <T>(fn: (t: Db) => Promise<T>) => target.tx((t) => fn(recordingDb(t, log)));
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
