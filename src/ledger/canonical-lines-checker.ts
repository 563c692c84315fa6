import type { Worker } from 'node:worker_threads';
import type { LinesCheck } from './canonical-lines.js';
import type { LinesRequest, LinesResult } from './canonical-lines-worker.js';
import { startLedgerWorker } from './worker-start.js';

/**
 * The package verifier's canonical-form checking thread (issue 21 item 3), one per process: started on first use,
 * referenced only while a check is pending (an idle thread never keeps the process alive). {@link check} resolves null
 * when the thread cannot start, dies or cannot read the file: the verifier then checks the lines itself, so the verdict
 * never depends on the thread.
 */
class CanonicalLinesChecker {
  private worker: Worker | null = null;
  private failed = false;
  private nextId = 0;
  private readonly pending = new Map<number, (r: LinesCheck | null) => void>();

  check(path: string): Promise<LinesCheck | null> {
    const w = this.start();
    if (!w) return Promise.resolve(null);
    return new Promise((resolve) => {
      const req: LinesRequest = { id: ++this.nextId, path };
      if (!this.pending.size) w.ref();
      this.pending.set(req.id, resolve);
      w.postMessage(req);
    });
  }

  private start(): Worker | null {
    if (this.worker || this.failed) return this.worker;
    let w: Worker;
    try {
      w = startLedgerWorker('canonical-lines-worker');
    } catch {
      this.failed = true;
      return null;
    }
    w.on('message', (r: LinesResult) => {
      const done = this.pending.get(r.id);
      this.pending.delete(r.id);
      if (!this.pending.size) w.unref();
      done?.('check' in r ? r.check : null);
    });
    w.on('error', () => this.stop());
    w.on('exit', () => this.stop());
    // After the listeners (adding one references the thread again): idle, it never keeps the process alive.
    w.unref();
    this.worker = w;
    return w;
  }

  private stop(): void {
    this.failed = true;
    this.worker = null;
    for (const done of this.pending.values()) done(null);
    this.pending.clear();
  }
}

let shared: CanonicalLinesChecker | undefined;

/** Checks `path`'s lines on the process's checking thread; null when that thread is not available. */
export function checkLinesOnThread(path: string): Promise<LinesCheck | null> {
  shared ??= new CanonicalLinesChecker();
  return shared.check(path);
}
