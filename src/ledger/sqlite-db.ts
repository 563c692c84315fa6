import { mkdirSync, realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import type { Db } from './db.js';
import type { TxLock } from './tx-lock.js';
import { lockForFile } from './tx-lock.js';

/** Options of {@link openSqliteDb}. */
export interface SqliteDbOptions {
  /** Open read-only (SQLITE_OPEN_READONLY), as SQLite does for a write-protected file. */
  readonly?: boolean;
  /** `FULL` (default) fsyncs the WAL on every commit: an append is durable before it resolves. */
  synchronous?: 'FULL' | 'NORMAL';
  /** Milliseconds to wait for another process's write lock (default 10 000). */
  busyTimeoutMs?: number;
}

type Stmt = Database.Statement<unknown[], unknown>;

function bindable(params: readonly unknown[] | undefined): unknown[] {
  if (!params) return [];
  return params.map((p) => (p === undefined ? null : typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

/**
 * SQLite behind {@link Db}: one file, WAL, `synchronous=FULL`. better-sqlite3 is synchronous, so every
 * statement runs under a per-file async lock and a transaction holds it until it commits (one writer).
 */
export class SqliteDb implements Db {
  readonly dialect = 'sqlite' as const;
  private readonly stmts = new Map<string, Stmt>();
  private depth = 0;
  private closed = false;

  private constructor(
    readonly location: string,
    private readonly conn: Database.Database,
    private readonly lock: TxLock,
    private readonly readonly: boolean,
  ) {}

  /** Opens (creating the file and its folder when missing) a SQLite store. */
  static open(path: string, opts: SqliteDbOptions = {}): SqliteDb {
    const file = resolve(path);
    if (!opts.readonly) mkdirSync(dirname(file), { recursive: true });
    const conn = new Database(file, { readonly: opts.readonly ?? false, fileMustExist: opts.readonly ?? false });
    conn.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 10_000}`);
    if (!opts.readonly) {
      try {
        conn.pragma('journal_mode = WAL');
      } catch (err) {
        // A write-protected file opens read-only: reads work, every write fails (HOST-093).
        if ((err as { code?: string }).code !== 'SQLITE_READONLY') throw err;
      }
      conn.pragma(`synchronous = ${opts.synchronous ?? 'FULL'}`);
    }
    conn.pragma('foreign_keys = ON');
    return new SqliteDb(file, conn, lockForFile(realpathSync(file)), opts.readonly ?? false);
  }

  private stmt(sql: string): Stmt {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.conn.prepare(sql);
      if (this.stmts.size > 500) this.stmts.clear();
      this.stmts.set(sql, s);
    }
    return s;
  }

  /** True inside {@link SqliteDb.tx} of this store, in the same async context. */
  inTransaction(): boolean {
    return this.depth > 0 && this.lock.held();
  }

  exec(sql: string): Promise<void> {
    return this.lock.run(async () => {
      this.conn.exec(sql);
    });
  }

  all<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.lock.run(async () => {
      const s = this.stmt(sql);
      if (!s.reader) {
        s.run(...bindable(params));
        return [];
      }
      return s.all(...bindable(params)) as T[];
    });
  }

  get<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    return this.lock.run(async () => {
      const s = this.stmt(sql);
      if (!s.reader) {
        s.run(...bindable(params));
        return undefined;
      }
      return s.get(...bindable(params)) as T | undefined;
    });
  }

  run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }> {
    return this.lock.run(async () => {
      const r = this.stmt(sql).run(...bindable(params));
      return { changes: r.changes };
    });
  }

  /** A transaction (`BEGIN IMMEDIATE`: takes the write lock first); nested calls use savepoints. */
  tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return this.lock.run(async () => {
      const nested = this.depth > 0;
      const sp = `sp_${this.depth}`;
      this.conn.exec(nested ? `SAVEPOINT ${sp}` : this.readonly ? 'BEGIN' : 'BEGIN IMMEDIATE');
      this.depth++;
      const undo = () => {
        try {
          this.conn.exec(nested ? `ROLLBACK TO ${sp}; RELEASE ${sp}` : 'ROLLBACK');
        } catch {
          // A failed COMMIT may already have rolled back; the original error is what matters.
        }
      };
      let out: T;
      try {
        out = await fn(this);
      } catch (err) {
        this.depth--;
        undo();
        throw err;
      }
      this.depth--;
      try {
        this.conn.exec(nested ? `RELEASE ${sp}` : 'COMMIT');
      } catch (err) {
        undo();
        throw err;
      }
      return out;
    });
  }

  close(): Promise<void> {
    return this.lock.run(async () => {
      if (this.closed) return;
      this.closed = true;
      this.stmts.clear();
      this.conn.close();
    });
  }
}
