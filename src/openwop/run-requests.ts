import { ErrorCode, HostError, createIdFactory, isoAt } from '../core/index.js';
import type { Clock, IdFactory } from '../core/index.js';
import { migrate } from '../ledger/index.js';
import type { Db } from '../ledger/index.js';

/**
 * One row per request a client sent to a process that does not drive the run (issue 19): a cancel, an interrupt
 * answer or a variable write, stored so it survives the owner's death. The owner applies it in the transaction of the
 * events it appends (under its lease fence) and marks it `applied` (or `failed`, with the error a local request would
 * raise); a request still `pending` when the owner died is applied by the process that takes the run over.
 */
export const RUN_REQUESTS_DDL = `CREATE TABLE run_requests (
  request_id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('cancel', 'interrupt', 'variables')),
  body TEXT NOT NULL,
  principal TEXT NOT NULL,
  sender TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'applied', 'failed', 'expired')),
  result TEXT,
  applied_by TEXT,
  created_at TEXT NOT NULL,
  applied_at TEXT
);
CREATE INDEX run_requests_pending ON run_requests (run_id, created_at) WHERE status = 'pending';`;

export type RunRequestKind = 'cancel' | 'interrupt' | 'variables';
export type RunRequestStatus = 'pending' | 'applied' | 'failed' | 'expired';

/** A stored request, as read back. */
export interface RunRequest {
  requestId: string;
  runId: string;
  kind: RunRequestKind;
  body: Record<string, unknown>;
  principal: string;
  status: RunRequestStatus;
  /** `applied`: what the owner answered (variables: the bag); `failed`: the error `{code, message, details}`. */
  result: unknown;
  appliedBy: string | null;
}

/** How a request ended, written by the owner in the transaction of its events (or alone when it appends none). */
export interface SettledRequest {
  requestId: string;
  status: 'applied' | 'failed';
  result: unknown;
}

interface Row {
  request_id: string;
  run_id: string;
  kind: RunRequestKind;
  body: string;
  principal: string;
  status: RunRequestStatus;
  result: string | null;
  applied_by: string | null;
}

function toRequest(r: Row): RunRequest {
  return {
    requestId: r.request_id,
    runId: r.run_id,
    kind: r.kind,
    body: JSON.parse(r.body) as Record<string, unknown>,
    principal: r.principal,
    status: r.status,
    result: r.result === null ? null : (JSON.parse(r.result) as unknown),
    appliedBy: r.applied_by,
  };
}

/** Creates `run_requests` once per PostgreSQL store (migration `openwop.run-requests`); SQLite never uses it. */
export async function ensureRunRequests(db: Db): Promise<void> {
  if (db.dialect === 'postgres') await migrate(db, 'openwop.run-requests', RUN_REQUESTS_DDL);
}

/** The error a failed request carries, raised again by the sender as a local request would have raised it. */
export function requestError(result: unknown): HostError {
  const r = (result ?? {}) as { code?: string; message?: string; details?: Record<string, unknown> };
  return new HostError(
    (r.code ?? ErrorCode.HOST_INTERNAL) as ErrorCode,
    r.message ?? 'the forwarded request failed',
    r.details ?? {},
  );
}

/** Tells the sender that a request ended (a `NOTIFY` in the settling transaction, delivered at commit). */
export type NotifySettled = (t: Db, runId: string, requestId: string) => Promise<void>;

/**
 * The stored requests of one process (issue 19): the sender stores and waits, the owner reads what is pending for
 * the runs it drives and settles each exactly once (the update matches only a `pending` row, in the transaction of the
 * events the request appends, so a request is never applied twice even by two processes in turn).
 */
export class RunRequests {
  private readonly ids: IdFactory;
  private readonly waiters = new Map<string, () => void>();

  constructor(
    readonly db: Db,
    private readonly clock: Clock,
    readonly owner: string,
    private readonly notify: { stored: NotifySettled; settled: NotifySettled },
  ) {
    this.ids = createIdFactory(clock);
  }

  /**
   * Stores a request for the owner of `runId` and notifies every process (one transaction), then waits until it is
   * settled (its notification) or `ms` passed, and reads it back: still `pending` when no owner applied it in time.
   */
  async send(
    runId: string,
    kind: RunRequestKind,
    body: Record<string, unknown>,
    principal: string,
    ms: number,
  ): Promise<RunRequest> {
    // A monotonic ULID (the order requests were sent in, within this process), prefixed as a request.
    const requestId = `rrq_${this.ids.next('event').slice('evt_'.length)}`;
    let wake: () => void = () => undefined;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    this.waiters.set(requestId, wake);
    const timer = this.clock.setTimeout(wake, ms);
    try {
      await this.db.tx(async (t) => {
        await t.run(
          `INSERT INTO run_requests (request_id, run_id, kind, body, principal, sender, status, created_at)
           VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)`,
          [requestId, runId, kind, JSON.stringify(body), principal, this.owner, isoAt(this.clock.now())],
        );
        await this.notify.stored(t, runId, requestId);
      });
      await woken;
    } finally {
      this.clock.clearTimeout(timer);
      this.waiters.delete(requestId);
    }
    return (await this.get(requestId))!;
  }

  async get(requestId: string): Promise<RunRequest | undefined> {
    const row = await this.db.get<Row>('SELECT * FROM run_requests WHERE request_id = ?', [requestId]);
    return row ? toRequest(row) : undefined;
  }

  /** Pending requests of the given runs, oldest first (the order they were sent in). */
  async pending(runIds: readonly string[]): Promise<RunRequest[]> {
    if (!runIds.length) return [];
    const rows = await this.db.all<Row>(
      `SELECT * FROM run_requests WHERE status = 'pending' AND run_id IN (${runIds.map(() => '?').join(', ')})
       ORDER BY created_at, request_id`,
      runIds,
    );
    return rows.map(toRequest);
  }

  /**
   * Marks a request ended, inside the caller's (fenced) transaction; raises `conflict` (the transaction then rolls
   * back, nothing of the request written) when it is no longer pending.
   */
  async settle(t: Db, runId: string, s: SettledRequest): Promise<void> {
    const { changes } = await t.run(
      `UPDATE run_requests SET status = ?, result = ?, applied_by = ?, applied_at = ?
       WHERE request_id = ? AND status = 'pending'`,
      [s.status, JSON.stringify(s.result ?? null), this.owner, isoAt(this.clock.now()), s.requestId],
    );
    if (changes !== 1)
      throw new HostError(ErrorCode.CONFLICT, `request ${s.requestId} was already settled`, {
        requestId: s.requestId,
        runId,
      });
    await this.notify.settled(t, runId, s.requestId);
  }

  /**
   * Settles a request of a run that is already terminal, outside any fence (no event can be appended to it any more,
   * so nothing of the request can be applied twice); false when it was no longer pending.
   */
  async closeEnded(runId: string, s: SettledRequest): Promise<boolean> {
    return this.db.tx(async (t) => {
      try {
        await this.settle(t, runId, s);
        return true;
      } catch (err) {
        if (err instanceof HostError && err.code === ErrorCode.CONFLICT) return false;
        throw err;
      }
    });
  }

  /** A settled notice (from any process, this one included) wakes the senders waiting on it here. */
  settled(requestId: string): void {
    this.waiters.get(requestId)?.();
  }
}
