import type { Db } from '../ledger/db.js';

interface Waiting<T> {
  work: (t: Db) => Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
}

/**
 * Group commit of run-log appends (issue 21 item 5): appends of any runs that arrive while a commit is in flight go
 * into the next one, one transaction (one fsync) for the batch. Each append runs in its own savepoint, so one that
 * fails (a terminal run, the lease fence, a schema refusal) is rolled back alone and rejects only its caller; a
 * failed commit rejects every caller in it, with nothing written. Every caller is released only once the transaction
 * holding its append has committed (on SQLite `FULL`, once the WAL is fsynced: `SqliteDb`), never earlier.
 *
 * SQLite only: there every transaction of the file is serialised anyway and pays its own fsync. On PostgreSQL
 * appends run concurrently on the pool (the server group-commits WAL flushes itself), and one transaction holding
 * several runs' lease locks (issue 19 fence, `FOR SHARE`) could deadlock with a multi-row lease renewal, so each
 * append keeps its own transaction there.
 */
export class AppendBatcher {
  private queue: Array<Waiting<unknown>> = [];
  private running: Promise<void> | undefined;
  /** Commits made and appends they carried (for the bench and tests). */
  readonly stats = { commits: 0, appends: 0 };

  constructor(private readonly db: Db) {}

  /** Runs `work` inside the next batch's transaction (in its own savepoint); resolves once that commit is durable. */
  submit<T>(work: (t: Db) => Promise<T>): Promise<T> {
    if (this.db.dialect !== 'sqlite') return this.alone(work);
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve, reject } as Waiting<unknown>);
      this.running ??= this.drain();
    });
  }

  private async alone<T>(work: (t: Db) => Promise<T>): Promise<T> {
    const v = await this.db.tx(work);
    this.stats.commits++;
    this.stats.appends++;
    return v;
  }

  /** Commits batches until the queue is empty; owned by `running` (one drain at a time, nothing unawaited). */
  private async drain(): Promise<void> {
    try {
      while (this.queue.length) {
        const batch = this.queue;
        this.queue = [];
        await this.commit(batch);
      }
    } finally {
      this.running = undefined;
    }
  }

  private async commit(batch: Array<Waiting<unknown>>): Promise<void> {
    const results: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      await this.db.tx(async (t) => {
        for (const w of batch) {
          try {
            results.push({ ok: true, value: await (batch.length === 1 ? w.work(t) : t.tx((s) => w.work(s))) });
          } catch (error) {
            // A lone append is its own transaction: its failure rolls the whole of it back.
            if (batch.length === 1) throw error;
            results.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      for (const w of batch) w.reject(error);
      return;
    }
    this.stats.commits++;
    this.stats.appends += batch.length;
    batch.forEach((w, i) => {
      const r = results[i]!;
      if (r.ok) w.resolve(r.value);
      else w.reject(r.error);
    });
  }
}
