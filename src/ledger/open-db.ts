import { ErrorCode, HostError } from '../core/index.js';
import type { Db } from './db.js';
import { PostgresDb, redactUrl } from './postgres-db.js';
import type { PostgresDbOptions } from './postgres-db.js';
import { SqliteDb } from './sqlite-db.js';
import type { SqliteDbOptions } from './sqlite-db.js';

/** Where the store lives when neither `--db` nor `MHS_HOST_DB` says otherwise. */
export const DEFAULT_DB_PATH = './.mhs-host/host.db';

/** Environment variable naming the store (a file path or a `postgres://` URL). */
export const DB_ENV_VAR = 'MHS_HOST_DB';

/**
 * Environment variable choosing SQLite's `synchronous` level: `full` (the default: every commit is fsynced, so
 * an intent survives a power loss) or `normal` (WAL commits survive a crash of the process but the last ones
 * may be lost on a power loss or kernel crash; about 1 ms less per governed call on the development VM).
 */
export const SQLITE_SYNC_ENV_VAR = 'MHS_SQLITE_SYNC';

/** The `synchronous` level named by {@link SQLITE_SYNC_ENV_VAR}; `MHS.HOST.CONFIG_INVALID` for anything else. */
export function sqliteSynchronousFromEnv(env: Record<string, string | undefined> = process.env): 'FULL' | 'NORMAL' {
  const raw = env[SQLITE_SYNC_ENV_VAR]?.trim().toLowerCase();
  if (!raw || raw === 'full') return 'FULL';
  if (raw === 'normal') return 'NORMAL';
  throw new HostError(
    ErrorCode.HOST_CONFIG_INVALID,
    `${SQLITE_SYNC_ENV_VAR} must be full or normal, not ${JSON.stringify(env[SQLITE_SYNC_ENV_VAR])}`,
    { variable: SQLITE_SYNC_ENV_VAR, value: env[SQLITE_SYNC_ENV_VAR] ?? null },
    { remediation: `Unset ${SQLITE_SYNC_ENV_VAR} (full durability) or set it to normal.` },
  );
}

/**
 * Environment variable: how long (ms) a SQLite write waits for another connection's lock before the store counts as
 * unavailable (default 10 000). better-sqlite3 waits synchronously, so a long-running host (`serve`) answers no request
 * meanwhile: a smaller value keeps it answering reads and the operator API while another process locks the file.
 */
export const SQLITE_BUSY_ENV_VAR = 'MHS_SQLITE_BUSY_MS';

/** The busy timeout named by {@link SQLITE_BUSY_ENV_VAR}, undefined when unset; `MHS.HOST.CONFIG_INVALID` when malformed. */
export function sqliteBusyMsFromEnv(env: Record<string, string | undefined> = process.env): number | undefined {
  const raw = env[SQLITE_BUSY_ENV_VAR]?.trim();
  if (!raw) return undefined;
  const n = Number(raw);
  if (/^\d+$/.test(raw) && Number.isSafeInteger(n)) return n;
  throw new HostError(
    ErrorCode.HOST_CONFIG_INVALID,
    `${SQLITE_BUSY_ENV_VAR} must be a whole number of milliseconds, not ${JSON.stringify(raw)}`,
    { variable: SQLITE_BUSY_ENV_VAR, value: raw },
    { remediation: `Unset ${SQLITE_BUSY_ENV_VAR} (10 000 ms) or set it to e.g. 250.` },
  );
}

/** Precedence: the `--db` flag, then `MHS_HOST_DB`, then {@link DEFAULT_DB_PATH}. */
export function resolveDbLocation(
  opts: { flag?: string | undefined; env?: Record<string, string | undefined> } = {},
): string {
  const env = opts.env ?? process.env;
  const flag = opts.flag?.trim();
  if (flag) return flag;
  const fromEnv = env[DB_ENV_VAR]?.trim();
  if (fromEnv) return fromEnv;
  return DEFAULT_DB_PATH;
}

/** True for `postgres://` and `postgresql://` locations. */
export function isPostgresLocation(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** Options of {@link openDb}. */
export interface OpenDbOptions {
  sqlite?: SqliteDbOptions;
  postgres?: PostgresDbOptions;
  /** Where {@link SQLITE_SYNC_ENV_VAR} is read when `sqlite.synchronous` is not given (default `process.env`). */
  env?: Record<string, string | undefined>;
}

/**
 * Opens the store at `location`: a `postgres://` URL (optionally `?schema=NAME`) or a SQLite file
 * path (optionally prefixed `sqlite:`; the file and its folder are created).
 * Fails with `MHS.HOST.LEDGER_UNAVAILABLE` when the store cannot be opened (HOST-093).
 */
export async function openDb(location: string, opts: OpenDbOptions = {}): Promise<Db> {
  const loc = location.trim();
  if (!loc) throw new HostError(ErrorCode.HOST_CONFIG_INVALID, 'empty store location', {});
  const synchronous = opts.sqlite?.synchronous ?? sqliteSynchronousFromEnv(opts.env);
  const busyTimeoutMs = opts.sqlite?.busyTimeoutMs ?? sqliteBusyMsFromEnv(opts.env);
  try {
    if (isPostgresLocation(loc)) return await PostgresDb.open(loc, opts.postgres);
    return SqliteDb.open(loc.replace(/^sqlite:/i, ''), {
      ...opts.sqlite,
      synchronous,
      ...(busyTimeoutMs !== undefined ? { busyTimeoutMs } : {}),
    });
  } catch (err) {
    const shown = isPostgresLocation(loc) ? redactUrl(loc) : loc;
    throw new HostError(
      ErrorCode.HOST_LEDGER_UNAVAILABLE,
      `cannot open the store at ${shown}: ${err instanceof Error ? err.message : String(err)}`,
      { location: shown },
      { remediation: 'Check the --db / MHS_HOST_DB location, its permissions and the database server.', cause: err },
    );
  }
}
