import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { RangeRequest, RangeResult } from './verify-worker.js';

/** Starts verify-worker.ts: compiled next to this file, or from the sources through tsx's loader (development, tests). */
function startWorker(): Worker {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new Worker(new URL('./verify-worker.js', here));
  const tsx = pathToFileURL(
    createRequire(here)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const entry = new URL('./verify-worker.ts', here).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true });
}

/**
 * The ledger verifier's reader thread for one SQLite file (issue 21): started on first use, kept until
 * {@link close}; referenced only while a check is pending, so an idle thread never keeps the process alive. {@link check} resolves null when the thread cannot
 * start or dies: the verifier then reads that range itself, so the verdict never depends on the thread.
 */
export class StoredRangeReader {
  private worker: Worker | null = null;
  private closed = false;
  private nextId = 0;
  private readonly pending = new Map<number, (r: RangeResult | null) => void>();

  constructor(private readonly file: string) {}

  /** Checks the rows with `after < seq <= through` on the reader thread. */
  check(after: number, through: number): Promise<RangeResult | null> {
    const w = this.start();
    if (!w) return Promise.resolve(null);
    return new Promise((resolve) => {
      const req: RangeRequest = { id: ++this.nextId, file: this.file, after, through };
      // Referenced while a check is pending (else a process awaiting only this would exit), unreferenced when idle.
      if (!this.pending.size) w.ref();
      this.pending.set(req.id, resolve);
      w.postMessage(req);
    });
  }

  private start(): Worker | null {
    if (this.worker || this.closed) return this.worker;
    let w: Worker;
    try {
      w = startWorker();
    } catch {
      this.closed = true;
      return null;
    }
    w.on('message', (r: RangeResult) => {
      const done = this.pending.get(r.id);
      this.pending.delete(r.id);
      if (!this.pending.size) w.unref();
      done?.(r.error === undefined ? r : null);
    });
    // A thread that cannot start (no compiled file, no tsx) or dies: its ranges are read by the verifier.
    w.on('error', () => this.stop());
    w.on('exit', () => this.stop());
    // After the listeners (adding one references the thread again): idle, it never keeps the process alive.
    w.unref();
    this.worker = w;
    return w;
  }

  private stop(): void {
    this.closed = true;
    this.worker = null;
    for (const done of this.pending.values()) done(null);
    this.pending.clear();
  }

  /** Ends the thread; later checks resolve null. */
  async close(): Promise<void> {
    const w = this.worker;
    this.stop();
    if (w) await w.terminate();
  }
}
