import type pg from 'pg';
import { ErrorCode, HostError } from '../core/index.js';
import type { Db } from './db.js';
import { TxLock } from './tx-lock.js';

/** Options of {@link PostgresDb.open}. */
export interface PostgresDbOptions {
  /** Pool size (default 8). */
  max?: number;
  /** Milliseconds to wait for a connection before failing (default 5 000). */
  connectionTimeoutMs?: number;
  /** Milliseconds a session may sit idle inside a transaction before the server ends it (default 5 000). */
  idleInTransactionMs?: number;
}

const placeholderCache = new Map<string, string>();

/** Rewrites `?` placeholders to `$1…$n`, leaving quoted text alone. */
export function toPgPlaceholders(sql: string): string {
  const hit = placeholderCache.get(sql);
  if (hit !== undefined) return hit;
  let out = '';
  let n = 0;
  let quote: string | null = null;
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = null;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else if (ch === '?') {
      out += `$${++n}`;
    } else out += ch;
  }
  if (placeholderCache.size > 1000) placeholderCache.clear();
  placeholderCache.set(sql, out);
  return out;
}

/** The driver, loaded on the first PostgreSQL open: a process on SQLite never pays for importing it. */
async function loadPg(): Promise<typeof pg> {
  return (await import('pg')).default;
}

/** BIGINT (int8) and COUNT(*) come back as numbers, as they do from SQLite. */
function typeParsers(driver: typeof pg) {
  return {
    getTypeParser: (oid: number, format?: string) =>
      oid === 20 ? (v: string) => Number(v) : driver.types.getTypeParser(oid, format as 'text'),
  };
}

/** The URL without its password, for logs and {@link Db.location}. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparsable url)';
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

function query(on: Queryable, sql: string, params?: readonly unknown[], arrays = false): Promise<pg.QueryResult> {
  const text = params && params.length ? toPgPlaceholders(sql) : sql;
  const values = params ? params.map((p) => (p === undefined ? null : p)) : undefined;
  return arrays ? on.query({ text, ...(values ? { values } : {}), rowMode: 'array' }) : on.query(text, values);
}

/** The statements of {@link Db} over a pool or one client. */
abstract class PgStatements implements Db {
  readonly dialect = 'postgres' as const;
  abstract readonly location: string;
  protected abstract on(): Queryable;
  abstract tx<T>(fn: (t: Db) => Promise<T>): Promise<T>;
  abstract close(): Promise<void>;

  async exec(sql: string): Promise<void> {
    await query(this.on(), sql);
  }

  async all<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return (await query(this.on(), sql, params ?? [])).rows as T[];
  }

  async rows<T extends unknown[] = unknown[]>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return (await query(this.on(), sql, params ?? [], true)).rows as T[];
  }

  async get<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    return (await query(this.on(), sql, params ?? [])).rows[0] as T | undefined;
  }

  async run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }> {
    return { changes: (await query(this.on(), sql, params ?? [])).rowCount ?? 0 };
  }
}

/** The handle a transaction's callback gets: its own pooled client; nested `tx` uses savepoints. */
class PgTx extends PgStatements {
  ended = false;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly depth: number,
    readonly location: string,
  ) {
    super();
  }

  protected on(): Queryable {
    if (this.ended)
      throw new HostError(ErrorCode.HOST_INTERNAL, 'a transaction handle was used after its transaction ended', {
        location: this.location,
      });
    return this.client;
  }

  async tx<T>(fn: (t: Db) => Promise<T>): Promise<T> {
    const sp = `sp_${this.depth}`;
    await this.on().query(`SAVEPOINT ${sp}`);
    const inner = new PgTx(this.client, this.depth + 1, this.location);
    try {
      const out = await fn(inner);
      await this.client.query(`RELEASE SAVEPOINT ${sp}`);
      return out;
    } catch (err) {
      await this.client.query(`ROLLBACK TO SAVEPOINT ${sp}`).catch(() => undefined);
      throw err;
    } finally {
      inner.ended = true;
    }
  }

  close(): Promise<void> {
    return Promise.reject(
      new HostError(ErrorCode.HOST_INTERNAL, 'close the store, not a transaction handle', { location: this.location }),
    );
  }
}

/** A dedicated `LISTEN` connection of {@link PostgresDb.listen}. */
export interface PgListener {
  /** Resolves when the connection is lost (with the error) or closed (`undefined`). */
  readonly ended: Promise<Error | undefined>;
  close(): Promise<void>;
}

/**
 * PostgreSQL behind {@link Db} (a `pg` pool). A `schema` query parameter in the URL selects (and
 * creates) the schema every connection uses, so test runs can share one database. Transactions
 * are serialised per Db, as on SQLite; statements outside a transaction use the pool freely.
 */
export class PostgresDb extends PgStatements {
  private readonly lock = new TxLock();

  private constructor(
    readonly location: string,
    private readonly pool: pg.Pool,
    /** The schema named in the URL, if any. */
    readonly schema: string | null,
    private readonly clientConfig: pg.ClientConfig,
    private readonly driver: typeof pg,
  ) {
    super();
  }

  /**
   * Opens a dedicated connection (outside the pool) that `LISTEN`s on `channel` and calls `onNotify` with each
   * payload. `ended` resolves with the error once the connection is lost (or `undefined` after `close`).
   */
  async listen(channel: string, onNotify: (payload: string) => void): Promise<PgListener> {
    const client = new this.driver.Client(this.clientConfig);
    let settle: (err: Error | undefined) => void = () => undefined;
    const ended = new Promise<Error | undefined>((resolve) => (settle = resolve));
    client.on('error', (err) => settle(err));
    client.on('end', () => settle(new Error('listen connection ended')));
    client.on('notification', (m) => {
      if (m.channel === channel) onNotify(m.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdent(channel)}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    return {
      ended,
      close: async () => {
        settle(undefined);
        await client.end().catch(() => undefined);
      },
    };
  }

  /** Connects (and checks the connection) to a `postgres://` or `postgresql://` URL. */
  static async open(url: string, opts: PostgresDbOptions = {}): Promise<PostgresDb> {
    const driver = await loadPg();
    const u = new URL(url);
    const schema = u.searchParams.get('schema');
    u.searchParams.delete('schema');
    const clientConfig: pg.ClientConfig = {
      connectionString: u.toString(),
      connectionTimeoutMillis: opts.connectionTimeoutMs ?? 5_000,
      // Issue 19: a process paused (SIGSTOP) or partitioned inside a transaction must not hold its row locks for
      // ever: `SKIP LOCKED` would skip its lapsed run leases and nobody could take them over. The server ends such a
      // session; the paused process's write then fails and it steps down.
      idle_in_transaction_session_timeout: opts.idleInTransactionMs ?? 5_000,
      types: typeParsers(driver),
      ...(schema ? { options: `-c search_path=${quoteIdent(schema)}` } : {}),
    };
    const pool = new driver.Pool({ ...clientConfig, max: opts.max ?? 8 });
    // An idle client losing its server must not crash the process; the next query reports it.
    pool.on('error', () => undefined);
    const db = new PostgresDb(redactUrl(url), pool, schema, clientConfig, driver);
    try {
      if (schema) await pool.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
      else await pool.query('SELECT 1');
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
    return db;
  }

  protected on(): Queryable {
    return this.pool;
  }

  tx<T>(fn: (t: Db) => Promise<T>): Promise<T> {
    return this.lock.run(async () => {
      const client = await this.pool.connect();
      const handle = new PgTx(client, 0, this.location);
      let broken = false;
      // A checked-out client has no pool listener: a session the server ends under it (idle_in_transaction_session_
      // timeout after a stall, a restart) must fail this transaction and discard the client, not crash the process.
      const lost = (): void => {
        broken = true;
      };
      client.on('error', lost);
      try {
        await client.query('BEGIN');
        const out = await fn(handle);
        handle.ended = true;
        await client.query('COMMIT');
        return out;
      } catch (err) {
        handle.ended = true;
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw err;
      } finally {
        client.removeListener('error', lost);
        client.release(broken);
      }
    });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
