/**
 * Test helpers for a host over real simulator endpoints: HTTP simulators in child processes, a real SQLite
 * store in a temp dir with one enabled connector per simulator (enabled as the recorded operator action of
 * `test-setup`), bearer tokens, and optionally `mhs-host serve` on that store. Also a spawner for one-shot
 * `mhs-host` CLI processes.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { RealClock } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import type { LedgerEntry } from '../../src/ledger/index.js';
import { openConnectorStore } from '../../src/policy/connector-store.js';
import { createEnablement } from '../../src/policy/enablement.js';
import { createTokenStore } from '../../src/policy/tokens.js';
import { serve, tempDb } from '../server/serve-helpers.js';
import { cliEntry } from './cli-entry.js';
import type { Served } from '../server/serve-helpers.js';
import { REPO_ROOT, startSimHttp } from './sim.js';
import type { SimHttp } from './sim.js';

/** What {@link startMhsHost} started. */
export interface MhsHost<K extends string> {
  sims: Record<K, SimHttp>;
  /** Location of the store: the SQLite file, or the `location` given (a PostgreSQL URL). */
  dbPath: string;
  /** Connector id of each simulator (`<prefix>-<name>`), enabled. */
  connectors: Record<K, string>;
  /** Bearer tokens by name. */
  tokens: Record<string, string>;
  /** `mhs-host serve` on the store, when asked for (tests may kill and restart it: see `serve`). */
  srv: Served | undefined;
  /** Stops the server (if still running) and every simulator. */
  stop(): Promise<void>;
}

/**
 * Starts the simulators (`sims`: name → [families, flags]), creates the store with an enabled HTTP connector
 * per simulator and the `tokens` (name → role), then `mhs-host serve --no-workflows` on it unless
 * `serve: false`.
 */
export async function startMhsHost<K extends string>(o: {
  prefix: string;
  sims: Record<K, [families: string, flags?: string[]]>;
  tokens?: Record<string, 'client' | 'operator' | 'agent'>;
  serve?: boolean;
  /** The store (default a fresh SQLite file), e.g. a PostgreSQL URL with its own schema. */
  location?: string;
}): Promise<MhsHost<K>> {
  const clock = new RealClock();
  const names = Object.keys(o.sims) as K[];
  const started = await Promise.all(names.map((n) => startSimHttp(o.sims[n][0], o.sims[n][1] ?? [])));
  const sims = Object.fromEntries(names.map((n, i) => [n, started[i]!])) as Record<K, SimHttp>;
  const connectors = Object.fromEntries(names.map((n) => [n, `${o.prefix}-${n}`])) as Record<K, string>;
  const dbPath = o.location ?? tempDb();
  const tokens: Record<string, string> = {};
  const db = await openDb(dbPath);
  try {
    const ledger = await openLedger(db, { clock });
    const store = await openConnectorStore(db, { clock });
    const enablement = createEnablement({ store, ledger });
    for (const name of names) {
      const sim = sims[name];
      await store.upsertDiscovered({
        connector_id: connectors[name],
        transport: 'http',
        url: sim.mcpUrl,
        base_url: sim.url,
        endpoint_id: sim.endpointId,
        display_name: name,
        source: { kind: 'env', ref: 'MHS_ENDPOINTS' },
        seen_in: [{ kind: 'env', ref: 'MHS_ENDPOINTS' }],
        auth: { scheme: 'none' },
        descriptor: null,
      });
      await enablement.enable(connectors[name], { id: 'test-setup', via: 'test' });
    }
    const t = createTokenStore(db, clock);
    for (const [name, role] of Object.entries(o.tokens ?? {})) tokens[name] = (await t.add(name, role)).token;
  } finally {
    await db.close();
  }
  const host: MhsHost<K> = {
    sims,
    dbPath,
    connectors,
    tokens,
    srv: o.serve === false ? undefined : await serve(dbPath, ['--no-workflows']),
    async stop() {
      await host.srv?.stop();
      await Promise.all(Object.values<SimHttp>(sims).map((s) => s.stop()));
    },
  };
  return host;
}

/** Every ledger entry of the store at `dbPath` (opened and closed for this read). */
export async function ledgerEntries(dbPath: string): Promise<LedgerEntry[]> {
  const db = await openDb(dbPath);
  try {
    return await (await openLedger(db, { clock: new RealClock() })).range(0);
  } finally {
    await db.close();
  }
}

/** A running `mhs-host` CLI process. */
export interface CliProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once stderr matches `re` (with the match), rejects if the process exits first. */
  waitStderr(re: RegExp): Promise<RegExpExecArray>;
  /** Resolves with the exit code and the full output. */
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** Spawns `mhs-host ...args` ({@link cliEntry}) in the repository root. */
export function startCli(args: string[], env: Record<string, string> = {}): CliProcess {
  const entry = cliEntry();
  const child = spawn(entry.command, [...entry.args, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const watchers = new Set<() => void>();
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    for (const w of [...watchers]) w();
  });
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (code) => {
      for (const w of [...watchers]) w();
      resolve({ code, stdout: out, stderr: err });
    }),
  );
  let closed = false;
  void done.then(() => (closed = true));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    done,
    waitStderr(re) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = re.exec(err);
          if (m) {
            watchers.delete(check);
            resolve(m);
          } else if (closed || child.exitCode !== null) {
            watchers.delete(check);
            reject(new Error(`process exited before ${String(re)}: ${err}`));
          }
        };
        watchers.add(check);
        check();
      });
    },
  };
}

/** Runs `mhs-host ...args` to completion. */
export function cli(args: string[], env: Record<string, string> = {}) {
  return startCli(args, env).done;
}
