import { ErrorCode, HostError, createIdFactory, isoAt } from '../core/index.js';
import type { Clock, IdFactory } from '../core/index.js';
import { migrate } from '../ledger/index.js';
import type { Db } from '../ledger/index.js';
import type { InvokeRequest } from './call-types.js';
import type { DisclosureRequest, SessionDisclosure } from './session-disclosure.js';
import type { OperatorPrincipal } from '../policy/estop.js';

/**
 * One row per operation a host process forwarded to the process holding the endpoint's lease (issue 19): a governed
 * call, a tool call that journals no intent, or the end of a session scope ({@link ForwardedOp}, in `request`). The
 * holder claims a governed call (`pending` → `sent`, with its command id) in the transaction that journals the
 * command's intent, so it is sent at most once whoever crashes, and any other operation just before it runs it; it
 * then stores the outcome (`applied`: the receipt or result; `failed`: the error a local call would raise).
 * `expired`: withdrawn by its sender before any holder claimed it (nothing sent), or a claimed read whose holder died.
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

/**
 * Migration `engine.endpoint-requests.relay`: `cancelled_at`, a sender's caller gave up on a call the holder already
 * claimed (the holder aborts it as a local caller's abort would); `approval_wait_ended_at`, the sender's caller stopped
 * waiting for an approval (its `approvalSignal`: the holder stops waiting, the approval stays pending); `disclosure`, the session disclosure the holder
 * shows before the call (HOST-003), and `disclosure_ack`, the sender's answer (`{shown:true}` or the error its
 * surface raised).
 */
export const ENDPOINT_REQUESTS_RELAY_DDL = `ALTER TABLE endpoint_requests ADD COLUMN cancelled_at TEXT;
ALTER TABLE endpoint_requests ADD COLUMN approval_wait_ended_at TEXT;
ALTER TABLE endpoint_requests ADD COLUMN disclosure TEXT;
ALTER TABLE endpoint_requests ADD COLUMN disclosure_ack TEXT;`;

/**
 * The `NOTIFY` channel of forwarded calls: `{k:'q', c}` a request stored for connector `c`, `{k:'d', id}` settled,
 * `{k:'w', id}` withdrawn (or, once claimed, cancelled) by its sender, `{k:'e', id}` its approval wait ended by the
 * sender, `{k:'s', id}` a disclosure for the sender to
 * show, `{k:'a', id}` the sender's answer to it, `{k:'p', id, a}` approval `a` asked for (or decided) by the holder for
 * the call.
 */
export const ENDPOINT_REQUESTS_CHANNEL = 'mhs_endpoint_requests';

export type EndpointRequestStatus = 'pending' | 'sent' | 'applied' | 'failed' | 'expired';

/**
 * The fields of an `InvokeRequest` that cannot cross processes: a live trace scope (restated as its W3C strings),
 * fences (the holder brings its own; the sender's run lease is stored with the row), abort signals, and the disclosure
 * callback (only its `surface` is forwarded). Every other field is forwarded as it is.
 */
export const LOCAL_ONLY_FIELDS = [
  'trace',
  'runFence',
  'intentFence',
  'signal',
  'approvalSignal',
  'disclosure',
] as const satisfies ReadonlyArray<keyof InvokeRequest>;
type LocalOnly = (typeof LOCAL_ONLY_FIELDS)[number];

/** The serialisable part of an `InvokeRequest` a holder needs to make the same governed call. */
export type ForwardedCall = Omit<InvokeRequest, LocalOnly> & {
  traceparent?: string;
  tracestate?: string;
  /** `relayed`: the sender shows the disclosure itself (its `show` callback), so the holder hands it over first. */
  disclosure?: Pick<DisclosureRequest, 'surface'> & { relayed?: true };
};

/**
 * What a sender asks of the process holding an endpoint (issue 19): a governed call, a tool call on the endpoint's
 * connection that journals no intent (reads, `mhs__safety`, `mhs__operations`, evidence export and verification),
 * the end of a task's session scope (HOST-034), an operator's trusted e-stop or reset (HOST-046, 071, 094), or the
 * reconciliation of unsettled commands (HOST-091: one, or every one of the endpoint or of one of its devices).
 */
export type ForwardedOp =
  | { kind: 'invoke'; call: ForwardedCall }
  | { kind: 'tool'; name: string; args: Record<string, unknown>; timeoutMs?: number; meta?: Record<string, string> }
  | { kind: 'closeScope'; scope: string }
  | { kind: 'safety'; action: 'estop' | 'reset'; deviceId: string; operator: OperatorPrincipal }
  | { kind: 'reconcile'; commandId?: string; deviceId?: string; untilSettled?: boolean };

/** A forwarded operation that journals no command intent of its own. */
export type ForwardedOpOther = Exclude<ForwardedOp, { kind: 'invoke' }>;

/** The stored form of a governed call (the live fields dropped, the trace as W3C strings). */
export function toForwardedCall(req: InvokeRequest): ForwardedCall {
  const rest: Partial<InvokeRequest> = { ...req };
  for (const k of LOCAL_ONLY_FIELDS) delete rest[k];
  const { trace, disclosure } = req;
  return {
    ...(rest as Omit<InvokeRequest, LocalOnly>),
    ...(trace ? { traceparent: trace.traceparent } : {}),
    ...(trace?.tracestate ? { tracestate: trace.tracestate } : {}),
    ...(disclosure
      ? { disclosure: { surface: disclosure.surface, ...(disclosure.show ? { relayed: true as const } : {}) } }
      : {}),
  };
}

/** The governed call a holder makes for a stored one. */
export function fromForwardedCall(c: ForwardedCall): InvokeRequest {
  const { traceparent, tracestate, disclosure, ...rest } = c;
  return {
    ...rest,
    ...(traceparent ? { trace: { traceparent, ...(tracestate ? { tracestate } : {}) } } : {}),
    ...(disclosure ? { disclosure: { surface: disclosure.surface } } : {}),
  };
}

/** A stored request, as read back. */
export interface EndpointRequest {
  requestId: string;
  connectorId: string;
  endpointId: string;
  op: ForwardedOp;
  run: { runId: string; owner: string; token: number } | null;
  sender: string;
  status: EndpointRequestStatus;
  commandId: string | null;
  /** `applied`: the serialised result; `failed`: `{code, message, details}`. */
  result: unknown;
  appliedBy: string | null;
  /** The sender's caller gave up after the holder claimed the call. */
  cancelled: boolean;
  /** The disclosure the holder handed over for the sender to show, and the sender's answer. */
  disclosure: SessionDisclosure | null;
  disclosureAck:
    { shown: true } | { error: { code: string; message: string; details?: Record<string, unknown> } } | null;
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
  cancelled_at: string | null;
  approval_wait_ended_at: string | null;
  disclosure: string | null;
  disclosure_ack: string | null;
}

function toRequest(r: Row): EndpointRequest {
  return {
    requestId: r.request_id,
    connectorId: r.connector_id,
    endpointId: r.endpoint_id,
    op: JSON.parse(r.request) as ForwardedOp,
    run:
      r.run_id && r.run_owner && r.run_token !== null
        ? { runId: r.run_id, owner: r.run_owner, token: Number(r.run_token) }
        : null,
    sender: r.sender,
    status: r.status,
    commandId: r.command_id,
    result: r.result === null ? null : (JSON.parse(r.result) as unknown),
    appliedBy: r.applied_by,
    cancelled: r.cancelled_at !== null,
    disclosure: r.disclosure === null ? null : (JSON.parse(r.disclosure) as SessionDisclosure),
    disclosureAck:
      r.disclosure_ack === null ? null : (JSON.parse(r.disclosure_ack) as EndpointRequest['disclosureAck']),
  };
}

/** Creates `endpoint_requests` once per PostgreSQL store (migration `engine.endpoint-requests`). */
export async function ensureEndpointRequests(db: Db): Promise<void> {
  if (db.dialect !== 'postgres') return;
  await migrate(db, 'engine.endpoint-requests', ENDPOINT_REQUESTS_DDL);
  await migrate(db, 'engine.endpoint-requests.relay', ENDPOINT_REQUESTS_RELAY_DDL);
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
   * Stores an operation for the holder of `connectorId` and notifies (one transaction). With `runFence`, a governed
   * call's run lease is checked in that transaction and its token stored, so the holder journals the intent only while
   * the sender still drives the run.
   */
  async store(
    connectorId: string,
    endpointId: string,
    op: ForwardedOp,
    runFence?: (t: Db) => Promise<void>,
  ): Promise<string> {
    const requestId = `erq_${this.ids.next('event').slice('evt_'.length)}`;
    const runId = op.kind === 'invoke' ? op.call.runId : undefined;
    await this.db.tx(async (t) => {
      let token: number | null = null;
      if (runFence && runId) {
        await runFence(t);
        // Read in the fenced transaction: the lease this process holds now (table of openwop.run-leases).
        const row = await t.get<{ token: number }>('SELECT token FROM run_leases WHERE run_id = ? AND owner = ?', [
          runId,
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
          endpointId,
          JSON.stringify(op),
          token === null ? null : runId,
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

  /**
   * The holder claims an operation that journals no intent (a tool call, the end of a session scope) before running
   * it; false when it was withdrawn or another holder claimed it.
   */
  async claim(requestId: string): Promise<boolean> {
    const { changes } = await this.db.run(
      `UPDATE endpoint_requests SET status = 'sent', applied_by = ? WHERE request_id = ? AND status = 'pending'`,
      [this.owner, requestId],
    );
    return changes === 1;
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

  /**
   * The sender withdraws a request no holder claimed yet (nothing will be sent); false when it was claimed. With
   * `claimed`, also one a holder claimed and did not settle: only for operations that journal no intent (reads may be
   * made again), never for a governed call.
   */
  async withdraw(requestId: string, opts: { claimed?: boolean } = {}): Promise<boolean> {
    return this.db.tx(async (t) => {
      const { changes } = await t.run(
        `UPDATE endpoint_requests SET status = 'expired', applied_at = ? WHERE request_id = ? AND status IN (?, ?)`,
        [isoAt(this.clock.now()), requestId, 'pending', opts.claimed ? 'sent' : 'pending'],
      );
      // A holder waiting for this call's approval stops waiting (and voids it).
      if (changes === 1) await notify(t, { k: 'w', id: requestId });
      return changes === 1;
    });
  }

  /**
   * The sender's caller gave up (its abort signal): a request no holder claimed is withdrawn (`expired`, nothing will
   * be sent); one a holder claimed is marked `cancelled_at`, and that holder aborts its call as a local caller's abort
   * would (never resent, never reported not executed once sent). Notifies `{k:'w'}` either way.
   */
  async cancel(requestId: string): Promise<'withdrawn' | 'cancelled' | 'ended'> {
    return this.db.tx(async (t) => {
      const now = isoAt(this.clock.now());
      const w = await t.run(
        `UPDATE endpoint_requests SET status = 'expired', applied_at = ? WHERE request_id = ? AND status = 'pending'`,
        [now, requestId],
      );
      const c =
        w.changes === 1
          ? w
          : await t.run(
              `UPDATE endpoint_requests SET cancelled_at = ? WHERE request_id = ? AND status = 'sent'
                 AND cancelled_at IS NULL`,
              [now, requestId],
            );
      if (c.changes === 1) await notify(t, { k: 'w', id: requestId });
      return w.changes === 1 ? 'withdrawn' : c.changes === 1 ? 'cancelled' : 'ended';
    });
  }

  /** The holder's notice of approval `approvalId` asked for (or decided) for the call: the sender shows it. */
  async announceApproval(requestId: string, approvalId: string): Promise<void> {
    await notify(this.db, { k: 'p', id: requestId, a: approvalId });
  }

  /**
   * The sender's caller stopped waiting for an approval (its `approvalSignal`): a holder waiting for one for this call
   * stops waiting, and the approval stays pending, as a local caller's would. Notifies `{k:'e'}`.
   */
  async endApprovalWait(requestId: string): Promise<void> {
    await this.db.tx(async (t) => {
      const { changes } = await t.run(
        `UPDATE endpoint_requests SET approval_wait_ended_at = ? WHERE request_id = ? AND status = 'pending'
           AND approval_wait_ended_at IS NULL`,
        [isoAt(this.clock.now()), requestId],
      );
      if (changes === 1) await notify(t, { k: 'e', id: requestId });
    });
  }

  /**
   * Of `requestIds`, those withdrawn or cancelled by their sender (`withdrawn`), or whose approval wait the sender
   * ended (`approvalWait`): what a holder that missed the notices reads.
   */
  async withdrawnAmong(requestIds: readonly string[]): Promise<{ withdrawn: string[]; approvalWait: string[] }> {
    if (!requestIds.length) return { withdrawn: [], approvalWait: [] };
    const rows = await this.db.all<{ request_id: string; withdrawn: boolean }>(
      `SELECT request_id, (status = 'expired' OR cancelled_at IS NOT NULL) AS withdrawn FROM endpoint_requests
       WHERE request_id = ANY(?::text[])
         AND (status = 'expired' OR cancelled_at IS NOT NULL OR approval_wait_ended_at IS NOT NULL)`,
      [requestIds],
    );
    return {
      withdrawn: rows.filter((r) => r.withdrawn).map((r) => r.request_id),
      approvalWait: rows.map((r) => r.request_id),
    };
  }

  /** The holder hands a pending call's disclosure to its sender to show (HOST-003); false when no longer pending. */
  async offerDisclosure(requestId: string, d: SessionDisclosure): Promise<boolean> {
    return this.db.tx(async (t) => {
      const { changes } = await t.run(
        `UPDATE endpoint_requests SET disclosure = ?, disclosure_ack = NULL WHERE request_id = ? AND status = 'pending'`,
        [JSON.stringify(d), requestId],
      );
      if (changes === 1) await notify(t, { k: 's', id: requestId });
      return changes === 1;
    });
  }

  /** The sender's answer to the disclosure it was handed: shown, or the error its surface raised. */
  async ackDisclosure(requestId: string, ack: NonNullable<EndpointRequest['disclosureAck']>): Promise<void> {
    await this.db.tx(async (t) => {
      const { changes } = await t.run(
        `UPDATE endpoint_requests SET disclosure_ack = ? WHERE request_id = ? AND disclosure IS NOT NULL
           AND disclosure_ack IS NULL`,
        [JSON.stringify(ack), requestId],
      );
      if (changes === 1) await notify(t, { k: 'a', id: requestId });
    });
  }
}
