import { ErrorCode, HostError, createIdFactory, isoAt } from '../core/index.js';
import type { Clock, IdFactory } from '../core/index.js';
import { migrate } from '../ledger/index.js';
import type { Db } from '../ledger/index.js';

/**
 * One row per governed call a host process forwarded to the process holding the endpoint's lease (issue 19). The
 * holder claims it (`pending` → `sent`, with its command id) in the transaction that journals the command's intent,
 * so a request is sent at most once whoever crashes; it then stores the outcome (`applied`: the receipt; `failed`: the
 * error a local call would raise). `expired`: withdrawn by its sender before any holder claimed it (nothing sent).
 */
export const ENDPOINT_REQUESTS_DDL = `CREATE TABLE endpoint_requests (
  request_id TEXT PRIMARY KEY,
  connector_id TEXT NOT NULL,
  endpoint_id TEXT NOT NULL,
  request TEXT NOT NULL,
  run_id TEXT,
  run_owner TEXT,
  run_token BIGINT,
  sender TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'applied', 'failed', 'expired')),
  command_id TEXT,
  result TEXT,
  applied_by TEXT,
  created_at TEXT NOT NULL,
  applied_at TEXT
);
CREATE INDEX endpoint_requests_pending ON endpoint_requests (connector_id, created_at) WHERE status = 'pending';`;

/** The `NOTIFY` channel of forwarded calls: `{k:'q', c}` a request stored for connector `c`, `{k:'d', id}` settled. */
export const ENDPOINT_REQUESTS_CHANNEL = 'mhs_endpoint_requests';

export type EndpointRequestStatus = 'pending' | 'sent' | 'applied' | 'failed' | 'expired';

/** The serialisable part of an `InvokeRequest` a holder needs to make the same governed call. */
export interface ForwardedCall {
  endpointId: string;
  deviceId: string;
  capabilityId: string;
  input: Record<string, unknown>;
  taskId?: string;
  sessionCapabilities?: string[];
  parentAction?: { taskId: string; seq: number; step?: number };
  traceparent?: string;
  tracestate?: string;
  runId?: string;
  nodeId?: string;
  expectedRevision?: number;
  resource?: string;
  deadlineMs?: number;
  principal?: { kind: 'agent' | 'human' | 'system'; id: string; name?: string };
  approvalKey?: string;
  disclosure?: unknown;
}

/** A stored request, as read back. */
export interface EndpointRequest {
  requestId: string;
  connectorId: string;
  endpointId: string;
  call: ForwardedCall;
  run: { runId: string; owner: string; token: number } | null;
  sender: string;
  status: EndpointRequestStatus;
  commandId: string | null;
  /** `applied`: the serialised result; `failed`: `{code, message, details}`. */
  result: unknown;
  appliedBy: string | null;
}

interface Row {
  request_id: string;
  connector_id: string;
  endpoint_id: string;
  request: string;
  run_id: string | null;
  run_owner: string | null;
  run_token: number | null;
  sender: string;
  status: EndpointRequestStatus;
  command_id: string | null;
  result: string | null;
  applied_by: string | null;
}

function toRequest(r: Row): EndpointRequest {
  return {
    requestId: r.request_id,
    connectorId: r.connector_id,
    endpointId: r.endpoint_id,
    call: JSON.parse(r.request) as ForwardedCall,
    run:
      r.run_id && r.run_owner && r.run_token !== null
        ? { runId: r.run_id, owner: r.run_owner, token: Number(r.run_token) }
        : null,
    sender: r.sender,
    status: r.status,
    commandId: r.command_id,
    result: r.result === null ? null : (JSON.parse(r.result) as unknown),
    appliedBy: r.applied_by,
  };
}

/** Creates `endpoint_requests` once per PostgreSQL store (migration `engine.endpoint-requests`). */
export async function ensureEndpointRequests(db: Db): Promise<void> {
  if (db.dialect === 'postgres') await migrate(db, 'engine.endpoint-requests', ENDPOINT_REQUESTS_DDL);
}

const notify = (t: Db, notice: Record<string, unknown>): Promise<unknown> =>
  t.run('SELECT pg_notify(?, ?)', [ENDPOINT_REQUESTS_CHANNEL, JSON.stringify(notice)]);

/** The forwarded calls of one store: stored by senders, claimed and settled by endpoint holders. */
export class EndpointRequests {
  private readonly ids: IdFactory;

  constructor(
    readonly db: Db,
    private readonly clock: Clock,
    readonly owner: string,
  ) {
    this.ids = createIdFactory(clock);
  }

  /**
   * Stores a call for the holder of `connectorId` and notifies (one transaction). With `runFence`, the sender's run
   * lease is checked in that transaction and its token stored, so the holder journals the intent only while the
   * sender still drives the run.
   */
  async store(connectorId: string, call: ForwardedCall, runFence?: (t: Db) => Promise<void>): Promise<string> {
    const requestId = `erq_${this.ids.next('event').slice('evt_'.length)}`;
    await this.db.tx(async (t) => {
      let token: number | null = null;
      if (runFence && call.runId) {
        await runFence(t);
        // Read in the fenced transaction: the lease this process holds now (table of openwop.run-leases).
        const row = await t.get<{ token: number }>('SELECT token FROM run_leases WHERE run_id = ? AND owner = ?', [
          call.runId,
          this.owner,
        ]);
        token = row ? Number(row.token) : null;
      }
      await t.run(
        `INSERT INTO endpoint_requests (request_id, connector_id, endpoint_id, request, run_id, run_owner, run_token,
           sender, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)`,
        [
          requestId,
          connectorId,
          call.endpointId,
          JSON.stringify(call),
          token === null ? null : call.runId,
          token === null ? null : this.owner,
          token,
          this.owner,
          isoAt(this.clock.now()),
        ],
      );
      await notify(t, { k: 'q', c: connectorId });
    });
    return requestId;
  }

  async get(requestId: string): Promise<EndpointRequest | undefined> {
    const row = await this.db.get<Row>('SELECT * FROM endpoint_requests WHERE request_id = ?', [requestId]);
    return row ? toRequest(row) : undefined;
  }

  /** Pending requests of the given connectors, oldest first. */
  async pending(connectorIds: readonly string[]): Promise<EndpointRequest[]> {
    if (!connectorIds.length) return [];
    const rows = await this.db.all<Row>(
      `SELECT * FROM endpoint_requests WHERE status = 'pending' AND connector_id = ANY(?::text[])
       ORDER BY created_at, request_id`,
      [connectorIds],
    );
    return rows.map(toRequest);
  }

  /**
   * The holder's claim, inside the transaction that journals the command's intent (after the endpoint fence): the
   * sender's run lease must still be its own, and the row still `pending` (not withdrawn, not claimed by an earlier
   * holder); else the intent is not written and nothing is sent.
   */
  claimFence(req: EndpointRequest): (t: Db, commandId: string) => Promise<void> {
    return async (t, commandId) => {
      if (req.run) {
        const lease = await t.get<{ owner: string; token: number }>(
          'SELECT owner, token FROM run_leases WHERE run_id = ? FOR SHARE',
          [req.run.runId],
        );
        if (!lease || lease.owner !== req.run.owner || Number(lease.token) !== req.run.token)
          throw new HostError(
            ErrorCode.HOST_RUN_LEASE_LOST,
            `run ${req.run.runId} is no longer driven by ${req.run.owner}, which forwarded this call`,
            { runId: req.run.runId, owner: req.run.owner, token: req.run.token, requestId: req.requestId },
          );
      }
      const { changes } = await t.run(
        `UPDATE endpoint_requests SET status = 'sent', command_id = ?, applied_by = ?
         WHERE request_id = ? AND status = 'pending'`,
        [commandId, this.owner, req.requestId],
      );
      if (changes !== 1)
        throw new HostError(ErrorCode.CONFLICT, `forwarded call ${req.requestId} was withdrawn or already sent`, {
          requestId: req.requestId,
        });
    };
  }

  /** Stores how a claimed (or refused before its intent) request ended and notifies; false when already ended. */
  async settle(requestId: string, status: 'applied' | 'failed', result: unknown): Promise<boolean> {
    return this.db.tx(async (t) => {
      const { changes } = await t.run(
        `UPDATE endpoint_requests SET status = ?, result = ?, applied_by = ?, applied_at = ?
         WHERE request_id = ? AND status IN ('pending', 'sent')`,
        [status, JSON.stringify(result ?? null), this.owner, isoAt(this.clock.now()), requestId],
      );
      if (changes === 1) await notify(t, { k: 'd', id: requestId });
      return changes === 1;
    });
  }

  /** The sender withdraws a request no holder claimed yet (nothing will be sent); false when it was claimed. */
  async withdraw(requestId: string): Promise<boolean> {
    const { changes } = await this.db.run(
      `UPDATE endpoint_requests SET status = 'expired', applied_at = ? WHERE request_id = ? AND status = 'pending'`,
      [isoAt(this.clock.now()), requestId],
    );
    return changes === 1;
  }
}
