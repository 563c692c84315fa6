import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import type { Db } from './db.js';
import { TxLock } from './tx-lock.js';

/** Options of {@link PostgresDb.open}. */
export interface PostgresDbOptions {
  /** Pool size (default 8). */
  max?: number;
  /** Milliseconds to wait for a connection before failing (default 5 000). */
  connectionTimeoutMs?: number;
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

/** BIGINT (int8) and COUNT(*) come back as numbers, as they do from SQLite. */
const types = {
  getTypeParser: (oid: number, format?: string) =>
    oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text'),
};

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

/**
 * PostgreSQL behind {@link Db} (a `pg` pool). A `schema` query parameter in the URL selects (and
 * creates) the schema every connection uses, so test runs can share one database. Transactions
 * are serialised per Db, as on SQLite; statements outside a transaction use the pool freely.
 */
export class PostgresDb implements Db {
  readonly dialect = 'postgres' as const;
  private readonly lock = new TxLock();
  private readonly txClient = new AsyncLocalStorage<{ client: pg.PoolClient; depth: number }>();

  private constructor(
    readonly location: string,
    private readonly pool: pg.Pool,
    /** The schema named in the URL, if any. */
    readonly schema: string | null,
  ) {}

  /** Connects (and checks the connection) to a `postgres://` or `postgresql://` URL. */
  static async open(url: string, opts: PostgresDbOptions = {}): Promise<PostgresDb> {
    const u = new URL(url);
    const schema = u.searchParams.get('schema');
    u.searchParams.delete('schema');
    const pool = new pg.Pool({
      connectionString: u.toString(),
      max: opts.max ?? 8,
      connectionTimeoutMillis: opts.connectionTimeoutMs ?? 5_000,
      types,
      ...(schema ? { options: `-c search_path=${quoteIdent(schema)}` } : {}),
    });
    // An idle client losing its server must not crash the process; the next query reports it.
    pool.on('error', () => undefined);
    const db = new PostgresDb(redactUrl(url), pool, schema);
    try {
      if (schema) await pool.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
      else await pool.query('SELECT 1');
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
    return db;
  }

  private async query(sql: string, params?: readonly unknown[]): Promise<pg.QueryResult> {
    const scoped = this.txClient.getStore();
    const text = params && params.length ? toPgPlaceholders(sql) : sql;
    const values = params ? params.map((p) => (p === undefined ? null : p)) : undefined;
    return scoped ? scoped.client.query(text, values) : this.pool.query(text, values);
  }

  /** True inside {@link PostgresDb.tx} of this Db, in the same async context. */
  inTransaction(): boolean {
    return this.txClient.getStore() !== undefined;
  }

  async exec(sql: string): Promise<void> {
    await this.query(sql);
  }

  async all<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return (await this.query(sql, params ?? [])).rows as T[];
  }

  async get<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    return (await this.query(sql, params ?? [])).rows[0] as T | undefined;
  }

  async run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }> {
    return { changes: (await this.query(sql, params ?? [])).rowCount ?? 0 };
  }

  async tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    const scoped = this.txClient.getStore();
    if (scoped) {
      const sp = `sp_${scoped.depth}`;
      await scoped.client.query(`SAVEPOINT ${sp}`);
      scoped.depth++;
      try {
        const out = await fn(this);
        await scoped.client.query(`RELEASE SAVEPOINT ${sp}`);
        return out;
      } catch (err) {
        await scoped.client.query(`ROLLBACK TO SAVEPOINT ${sp}`).catch(() => undefined);
        throw err;
      } finally {
        scoped.depth--;
      }
    }
    return this.lock.run(async () => {
      const client = await this.pool.connect();
      let broken = false;
      try {
        await client.query('BEGIN');
        const out = await this.txClient.run({ client, depth: 0 }, () => fn(this));
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw err;
      } finally {
        client.release(broken);
      }
    });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
