import { mkdirSync, realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { ErrorCode, HostError } from '../core/index.js';
import type { Db } from './db.js';
import type { TxLock } from './tx-lock.js';
import { lockForFile } from './tx-lock.js';
import { WalSync } from './wal-sync.js';
import type { FsyncFn } from './wal-sync.js';

/** Options of {@link openSqliteDb}. */
export interface SqliteDbOptions {
  /** Open read-only (SQLITE_OPEN_READONLY), as SQLite does for a write-protected file. */
  readonly?: boolean;
  /**
   * `FULL` (default): every write is fsynced before it resolves. In WAL mode the fsync runs off the event loop
   * after COMMIT, with the file lock still held (see {@link WalSync}); `NORMAL` skips it (survives a process crash,
   * not a power loss).
   */
  synchronous?: 'FULL' | 'NORMAL';
  /** The fsync used for the WAL under `FULL` (default `fs.fsync` on the thread pool); tests observe or fail it. */
  fsync?: FsyncFn;
  /** Milliseconds to wait for another process's write lock (default 10 000). */
  busyTimeoutMs?: number;
}

type Stmt = Database.Statement<unknown[], unknown>;

function bindable(params: readonly unknown[] | undefined): unknown[] {
  if (!params) return [];
  return params.map((p) => (p === undefined ? null : typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

/** The connection and its statement cache; synchronous, used under the file lock or inside a transaction. */
class SqliteConn {
  private readonly stmts = new Map<string, Stmt>();
  /** A statement that may write ran since the last fsync. */
  dirty = false;

  constructor(
    readonly conn: Database.Database,
    readonly readonly: boolean,
  ) {}

  private stmt(sql: string, control = false, raw = false): Stmt {
    const key = raw ? `raw\u0000${sql}` : sql;
    let s = this.stmts.get(key);
    if (!s) {
      s = this.conn.prepare(sql);
      if (raw) s.raw(true);
      if (this.stmts.size > 500) this.stmts.clear();
      this.stmts.set(key, s);
    }
    if (!s.reader && !control) this.dirty = true;
    return s;
  }

  exec(sql: string): void {
    this.dirty = true;
    this.conn.exec(sql);
  }

  all<T>(sql: string, params?: readonly unknown[]): T[] {
    const s = this.stmt(sql);
    if (!s.reader) {
      s.run(...bindable(params));
      return [];
    }
    return s.all(...bindable(params)) as T[];
  }

  rows<T extends unknown[]>(sql: string, params?: readonly unknown[]): T[] {
    return this.stmt(sql, false, true).all(...bindable(params)) as T[];
  }

  get<T>(sql: string, params?: readonly unknown[]): T | undefined {
    const s = this.stmt(sql);
    if (!s.reader) {
      s.run(...bindable(params));
      return undefined;
    }
    return s.get(...bindable(params)) as T | undefined;
  }

  run(sql: string, params?: readonly unknown[]): { changes: number } {
    return { changes: this.stmt(sql).run(...bindable(params)).changes };
  }

  /** BEGIN, COMMIT, ROLLBACK and savepoints: they write nothing of their own. */
  private control(sql: string): void {
    this.stmt(sql, true).run();
  }

  /** `BEGIN IMMEDIATE` (takes the write lock first) at depth 0, a savepoint below it. */
  async transaction<T>(depth: number, location: string, fn: (t: Db) => Promise<T>): Promise<T> {
    const nested = depth > 0;
    const sp = `sp_${depth}`;
    this.control(nested ? `SAVEPOINT ${sp}` : this.readonly ? 'BEGIN' : 'BEGIN IMMEDIATE');
    const undo = () => {
      try {
        if (nested) this.conn.exec(`ROLLBACK TO ${sp}; RELEASE ${sp}`);
        else this.control('ROLLBACK');
      } catch {
        // A failed COMMIT may already have rolled back; the original error is what matters.
      }
    };
    const handle = new SqliteTx(this, depth + 1, location);
    let out: T;
    try {
      out = await fn(handle);
    } catch (err) {
      undo();
      throw err;
    } finally {
      handle.ended = true;
    }
    try {
      this.control(nested ? `RELEASE ${sp}` : 'COMMIT');
    } catch (err) {
      undo();
      throw err;
    }
    return out;
  }

  clear(): void {
    this.stmts.clear();
  }
}

/** The handle a transaction's callback gets: runs directly on the connection, which the transaction holds. */
class SqliteTx implements Db {
  readonly dialect = 'sqlite' as const;
  ended = false;

  constructor(
    private readonly c: SqliteConn,
    private readonly depth: number,
    readonly location: string,
  ) {}

  private live<T>(fn: () => T): Promise<T> {
    if (this.ended)
      return Promise.reject(
        new HostError(ErrorCode.HOST_INTERNAL, 'a transaction handle was used after its transaction ended', {
          location: this.location,
        }),
      );
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(err);
    }
  }

  exec(sql: string): Promise<void> {
    return this.live(() => this.c.exec(sql));
  }

  all<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.live(() => this.c.all<T>(sql, params));
  }

  rows<T extends unknown[] = unknown[]>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.live(() => this.c.rows<T>(sql, params));
  }

  get<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    return this.live(() => this.c.get<T>(sql, params));
  }

  run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }> {
    return this.live(() => this.c.run(sql, params));
  }

  tx<T>(fn: (t: Db) => Promise<T>): Promise<T> {
    return this.ended ? this.live(() => undefined as T) : this.c.transaction(this.depth, this.location, fn);
  }

  close(): Promise<void> {
    return Promise.reject(
      new HostError(ErrorCode.HOST_INTERNAL, 'close the store, not a transaction handle', { location: this.location }),
    );
  }
}

/**
 * SQLite behind {@link Db}: one file, WAL, durable commits (`synchronous=FULL` semantics). better-sqlite3 is
 * synchronous, so every statement runs under a per-file async lock and a transaction holds it until it commits
 * and its WAL fsync has finished (one writer; nothing in this process reads a commit before it is durable). The
 * fsync leaves the event loop, so the ledger writer's queue fills during it: group commit across endpoints.
 */
export class SqliteDb implements Db {
  readonly dialect = 'sqlite' as const;
  private closed = false;

  private constructor(
    readonly location: string,
    private readonly c: SqliteConn,
    private readonly lock: TxLock,
    private readonly wal: WalSync | null,
  ) {}

  /** Opens (creating the file and its folder when missing) a SQLite store. */
  static open(path: string, opts: SqliteDbOptions = {}): SqliteDb {
    const file = resolve(path);
    if (!opts.readonly) mkdirSync(dirname(file), { recursive: true });
    const conn = new Database(file, { readonly: opts.readonly ?? false, fileMustExist: opts.readonly ?? false });
    conn.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 10_000}`);
    let wal: WalSync | null = null;
    if (!opts.readonly) {
      let mode = '';
      try {
        mode = String(conn.pragma('journal_mode = WAL', { simple: true })).toLowerCase();
      } catch (err) {
        // A write-protected file opens read-only: reads work, every write fails (HOST-093).
        if ((err as { code?: string }).code !== 'SQLITE_READONLY') throw err;
      }
      const full = (opts.synchronous ?? 'FULL') === 'FULL';
      // FULL in WAL mode: SQLite writes the frames (NORMAL) and WalSync syncs them before the write resolves.
      if (full && mode === 'wal') wal = new WalSync(`${file}-wal`, opts.fsync);
      conn.pragma(`synchronous = ${full && !wal ? 'FULL' : 'NORMAL'}`);
    }
    conn.pragma('foreign_keys = ON');
    const c = new SqliteConn(conn, opts.readonly ?? false);
    return new SqliteDb(file, c, lockForFile(realpathSync(file)), wal);
  }

  /** `FULL` when every write is fsynced before it resolves, else `NORMAL`. */
  get synchronous(): 'FULL' | 'NORMAL' {
    return this.wal || this.c.conn.pragma('synchronous', { simple: true }) === 2 ? 'FULL' : 'NORMAL';
  }

  /** WAL fsyncs issued so far (each covers every commit before it; 0 without a WAL sync). */
  get walSyncs(): number {
    return this.wal?.syncs ?? 0;
  }

  /** Runs `fn` under the file lock; a write it made is fsynced before the lock is released. */
  private locked<T>(fn: () => Promise<T>): Promise<T> {
    return this.lock.run(async () => {
      try {
        return await fn();
      } finally {
        if (this.c.dirty) {
          this.c.dirty = false;
          await this.wal?.sync();
        }
      }
    });
  }

  exec(sql: string): Promise<void> {
    return this.locked(async () => this.c.exec(sql));
  }

  all<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.locked(async () => this.c.all<T>(sql, params));
  }

  rows<T extends unknown[] = unknown[]>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.locked(async () => this.c.rows<T>(sql, params));
  }

  get<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    return this.locked(async () => this.c.get<T>(sql, params));
  }

  run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }> {
    return this.locked(async () => this.c.run(sql, params));
  }

  /** A transaction holding the file lock until it commits and is durable; nested `tx` on its handle uses savepoints. */
  tx<T>(fn: (t: Db) => Promise<T>): Promise<T> {
    return this.locked(() => this.c.transaction(0, this.location, fn));
  }

  close(): Promise<void> {
    return this.lock.run(async () => {
      if (this.closed) return;
      this.closed = true;
      this.c.clear();
      this.c.conn.close();
      this.wal?.close();
    });
  }
}
