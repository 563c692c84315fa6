/**
 * The one SQL handle every durable part of the host shares (ledger, connector rows, runs, events,
 * approvals, permits, tokens). Implemented for SQLite (better-sqlite3, WAL; the default) and
 * PostgreSQL (`pg`). SQL is written with `?` placeholders; the PostgreSQL driver rewrites them.
 * Keep SQL portable: TEXT/INTEGER/BIGINT columns, JSON stored as TEXT.
 */
import { ErrorCode, toHostError } from '../core/index.js';
export interface Db {
  readonly dialect: 'sqlite' | 'postgres';
  /** Where it points: a file path or a URL with the password removed. */
  readonly location: string;
  /** Runs DDL or several statements without parameters. */
  exec(sql: string): Promise<void>;
  /** Rows of a query. */
  all<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * Rows of a query as arrays of their column values in select order: no object per row, for reads of many rows
   * (ledger verification, issue 21).
   */
  rows<T extends unknown[] = unknown[]>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** First row or undefined. */
  get<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
  /** A statement without rows; `changes` is the affected row count. */
  run(sql: string, params?: readonly unknown[]): Promise<{ changes: number }>;
  /**
   * Runs `fn` in one transaction (serialised per Db); rolls back when it throws. Inside `fn` use only the
   * handle it is given (its `tx` nests as a savepoint): on SQLite a call on the outer Db waits for the
   * transaction to end, so calling it from inside the transaction would never return.
   */
  tx<T>(fn: (t: Db) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Runs a store operation; any failure is `MHS.HOST.LEDGER_UNAVAILABLE` (HOST-093: visible, never dropped). */
export async function storeCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toHostError(err, ErrorCode.HOST_LEDGER_UNAVAILABLE);
  }
}
