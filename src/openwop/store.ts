import { EventEmitter } from 'node:events';
import { ErrorCode, HostError, createIdFactory, isoAt } from '../core/index.js';
import type { Clock, IdFactory } from '../core/index.js';
import type { Db } from '../ledger/db.js';
import { asStoreOutage } from '../ledger/store-outage.js';
import { openwopSchemas } from './schemas.js';
import { ensureOpenwopTables } from './store-schema.js';
import type { RunRequests, SettledRequest } from './run-requests.js';
import { TERMINAL_STATUSES } from './types.js';
import { putWorkflowVersion } from './workflow-versions.js';
import { AppendBatcher } from './append-batcher.js';
import { engineTypeOf, storedType } from './event-log-era.js';
import type { WorkflowVersion } from './workflow-versions.js';
import type { RunError, RunEvent, RunEventInput, RunRecord, RunStatus, WorkflowDefinition } from './types.js';

/** Engine version stamped on events and snapshots. */
export const ENGINE_VERSION = '1';
/** Per-run event-log contract version. */
export const EVENT_LOG_SCHEMA_VERSION = 1;

/** Fields of the run row an append may change in the same transaction as its events. */
export interface RunPatch {
  status?: RunStatus;
  variables?: Record<string, unknown>;
  error?: RunError | null;
  startedAt?: string;
  completedAt?: string;
}

/**
 * Who may write a run (issue 19): each hook runs inside the store's write transaction. Absent on a store only one
 * process drives (SQLite), where every run's lease is trivially held.
 */
export interface RunFence {
  /**
   * The inserting process takes the new run's lease, or (`spread`) hands it to a less loaded process; true when this
   * process drives the run.
   */
  claim(t: Db, runId: string, o?: { spread?: boolean }): Promise<boolean>;
  /** Raises `MHS.HOST.RUN_LEASE_LOST` unless this process still holds `runId`'s lease; nothing is then written. */
  check(t: Db, runId: string): Promise<void>;
  /** The lease ends with the run (its terminal event). */
  end(t: Db, runId: string): Promise<void>;
}

/** Tells other processes of committed appends (issue 19; a shared PostgreSQL store). */
/** An event to append; `eventId` when the caller drew it beforehand ({@link OpenwopStore.newEventId}). */
export type AppendInput = RunEventInput & { eventId?: string };

/** Rows read per query when a run's whole log (or all of it after a sequence) is read: never a silent cap. */
const EVENT_PAGE = 5_000;

export interface RunEventNotifier {
  /** Runs inside the append transaction (a `NOTIFY` is delivered at commit, never for a rollback). */
  appended(t: Db, runId: string, firstSequence: number, lastSequence: number): Promise<void>;
}

/** A new run as inserted. */
export interface NewRun {
  workflow: WorkflowDefinition;
  parentRunId?: string | null;
  parentNodeId?: string | null;
  inputs: Record<string, unknown>;
  variables: Record<string, unknown>;
  tags?: string[];
  metadata?: Record<string, unknown>;
  configurable?: Record<string, unknown>;
  principal?: string | null;
  idempotencyKey?: string | null;
  requestDigest?: string | null;
  traceparent?: string | null;
  /** May be handed to another, less loaded process of a shared store (issue 19); else this process drives it. */
  spread?: boolean;
}

interface RunRow {
  run_id: string;
  workflow_id: string;
  workflow_version: string;
  definition: string;
  status: RunStatus;
  parent_run_id: string | null;
  parent_node_id: string | null;
  inputs: string;
  variables: string;
  tags: string;
  metadata: string;
  configurable: string;
  principal: string | null;
  idempotency_key: string | null;
  request_digest: string | null;
  traceparent: string | null;
  error: string | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  last_seq: number | string;
  event_log_schema_version: number | string | null;
}

interface EventRow {
  run_id: string;
  sequence: number | string;
  event_id: string;
  type: string;
  node_id: string | null;
  causation_id: string | null;
  ts: string;
  payload: string;
}

function toRun(r: RunRow): RunRecord & {
  definition: WorkflowDefinition;
  requestDigest: string | null;
  eventLogSchemaVersion: number | null;
} {
  return {
    runId: r.run_id,
    workflowId: r.workflow_id,
    workflowVersion: r.workflow_version,
    definition: JSON.parse(r.definition) as WorkflowDefinition,
    status: r.status,
    parentRunId: r.parent_run_id,
    parentNodeId: r.parent_node_id,
    inputs: JSON.parse(r.inputs) as Record<string, unknown>,
    variables: JSON.parse(r.variables) as Record<string, unknown>,
    tags: JSON.parse(r.tags) as string[],
    metadata: JSON.parse(r.metadata) as Record<string, unknown>,
    configurable: JSON.parse(r.configurable) as Record<string, unknown>,
    principal: r.principal,
    idempotencyKey: r.idempotency_key,
    requestDigest: r.request_digest,
    traceparent: r.traceparent,
    error: r.error ? (JSON.parse(r.error) as RunError) : null,
    createdAt: r.created_at,
    startedAt: r.started_at,
    completedAt: r.completed_at,
    lastSequence: Number(r.last_seq),
    /** The stored era key; null (absent) reads as era 2 (event-log-era.ts). */
    eventLogSchemaVersion: r.event_log_schema_version === null ? null : Number(r.event_log_schema_version),
  };
}

function toEvent(r: EventRow, era: number | null): RunEvent {
  const sequence = Number(r.sequence);
  const e: RunEvent = {
    eventId: r.event_id,
    runId: r.run_id,
    sequence,
    type: engineTypeOf(era, r.type, sequence),
    payload: JSON.parse(r.payload) as Record<string, unknown>,
    timestamp: r.ts,
    engineVersion: ENGINE_VERSION,
  };
  if (r.node_id) e.nodeId = r.node_id;
  if (r.causation_id) e.causationId = r.causation_id;
  return e;
}

/** A stored run with the definition it was started with. */
export type StoredRun = ReturnType<typeof toRun>;

/**
 * Durable OpenWOP state over the shared `Db`: registered workflows, runs, and the append-only event
 * log. Sequences are assigned from 0 inside the append transaction (the run row's `last_seq` is
 * the counter, so concurrent writers serialise on it); every event is checked against
 * run-event.schema.json and its payload $def before it is written.
 */
export class OpenwopStore {
  private readonly ids: IdFactory;
  private readonly bus = new EventEmitter();
  private readonly ready: Promise<void>;
  /** Set once by the process's run ownership (a shared PostgreSQL store), before any run is created or resumed. */
  fence: RunFence | undefined;
  /** Set once on a shared PostgreSQL store: other processes learn of this process's appends. */
  notifier: RunEventNotifier | undefined;
  /** Set once on a shared PostgreSQL store: requests forwarded to the process that drives a run (issue 19). */
  requests: RunRequests | undefined;
  /** Per run with local subscribers: the last sequence emitted to them, and the relay read in flight. */
  private readonly relayed = new Map<string, { last: number; reading: Promise<void> }>();
  /** Group commit of appends across runs (issue 21 item 5). */
  readonly appends: AppendBatcher;
  /** Each run's appends submitted and not yet settled (a long poll takes them into its answer: long-poll.ts). */
  private readonly inFlight = new Map<string, Set<Promise<unknown>>>();
  /**
   * The era key stamped on every run this store creates: 3 where the host serves major 2 (v2 persistence.md: every
   * creation path in the same change), else none (a v1 host's run, read as era 2). Set once, before any run is created.
   */
  newRunEra: 3 | null = null;

  constructor(
    readonly db: Db,
    readonly clock: Clock,
    /** Told of every write the store refused as unavailable (HOST-093), e.g. to mark the ledger unavailable. */
    private readonly onOutage?: (err: HostError) => void,
  ) {
    this.ids = createIdFactory(clock);
    this.appends = new AppendBatcher(db);
    this.bus.setMaxListeners(0);
    this.ready = ensureOpenwopTables(db);
  }

  /** Resolves when the tables exist. */
  init(): Promise<void> {
    return this.ready;
  }

  /** A write whose store failure is raised as `MHS.HOST.LEDGER_UNAVAILABLE` (503, retryable; HOST-093). */
  private async write<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      const e = asStoreOutage(err, this.db.location, { operation });
      if (e instanceof HostError && e.code === ErrorCode.HOST_LEDGER_UNAVAILABLE) this.onOutage?.(e);
      throw e;
    }
  }

  newRunId(): string {
    return this.ids.next('run');
  }

  /** An event id drawn ahead of its append (a run actor names causations within one batch of events). */
  newEventId(): string {
    return this.ids.next('event');
  }

  /**
   * Stores `def` as the current definition of its id, as a new version unless the current one has its digest
   * (workflow-versions.ts); `record` runs in the same transaction when a version was made (its ledger entry).
   */
  async putWorkflow(
    def: WorkflowDefinition,
    source: string,
    opts: { principal?: string | null; record?: (t: Db, v: WorkflowVersion) => Promise<void> } = {},
  ): Promise<WorkflowVersion> {
    await this.ready;
    // One transaction: processes starting together on one store register the same fixtures at once (issue 19).
    return this.write('put_workflow', () =>
      this.db.tx(async (t) => {
        const v = await putWorkflowVersion(t, this.clock, def, source, opts.principal ?? null);
        if (v.created) await opts.record?.(t, v);
        return v;
      }),
    );
  }

  async getWorkflow(id: string): Promise<WorkflowDefinition | undefined> {
    await this.ready;
    const row = await this.db.get<{ definition: string }>(
      'SELECT definition FROM openwop_workflows WHERE workflow_id = ?',
      [id],
    );
    return row ? (JSON.parse(row.definition) as WorkflowDefinition) : undefined;
  }

  async listWorkflows(): Promise<Array<{ id: string; version: string; name: string; source: string }>> {
    await this.ready;
    const rows = await this.db.all<{ definition: string; source: string }>(
      'SELECT definition, source FROM openwop_workflows ORDER BY workflow_id',
    );
    return rows.map((r) => {
      const d = JSON.parse(r.definition) as WorkflowDefinition;
      return { id: d.id, version: d.version, name: d.name, source: r.source };
    });
  }

  /**
   * Inserts a run with status `pending`. With an idempotency key already used, returns the existing
   * run and `created: false`; a different request under the same key raises `conflict`.
   */
  async createRun(n: NewRun): Promise<{ run: StoredRun; created: boolean; driven: boolean }> {
    await this.ready;
    return this.write('create_run', () => this.createRunTx(n));
  }

  /** In the append batcher's next transaction (group commit; its own savepoint, so a refusal rolls back alone). */
  private createRunTx(n: NewRun): Promise<{ run: StoredRun; created: boolean; driven: boolean }> {
    return this.appends.submit(async (t) => {
      if (n.idempotencyKey) {
        const prior = await t.get<RunRow>('SELECT * FROM openwop_runs WHERE idempotency_key = ?', [n.idempotencyKey]);
        if (prior) {
          if (n.requestDigest && prior.request_digest && prior.request_digest !== n.requestDigest) {
            throw new HostError(ErrorCode.CONFLICT, 'Idempotency-Key reused with a different request', {
              runId: prior.run_id,
            });
          }
          return { run: toRun(prior), created: false, driven: false };
        }
      }
      const runId = this.newRunId();
      await t.run(
        `INSERT INTO openwop_runs (run_id, workflow_id, workflow_version, definition, status, parent_run_id, parent_node_id,
          inputs, variables, tags, metadata, configurable, principal, idempotency_key, request_digest, traceparent, error,
          created_at, started_at, completed_at, last_seq, event_log_schema_version)
         VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, NULL, NULL, -1, ?)`,
        [
          runId,
          n.workflow.id,
          n.workflow.version,
          JSON.stringify(n.workflow),
          n.parentRunId ?? null,
          n.parentNodeId ?? null,
          JSON.stringify(n.inputs),
          JSON.stringify(n.variables),
          JSON.stringify(n.tags ?? []),
          JSON.stringify(n.metadata ?? {}),
          JSON.stringify(n.configurable ?? {}),
          n.principal ?? null,
          n.idempotencyKey ?? null,
          n.requestDigest ?? null,
          n.traceparent ?? null,
          isoAt(this.clock.now()),
          this.newRunEra,
        ],
      );
      const driven = this.fence ? await this.fence.claim(t, runId, { spread: n.spread === true }) : true;
      const row = await t.get<RunRow>('SELECT * FROM openwop_runs WHERE run_id = ?', [runId]);
      return { run: toRun(row!), created: true, driven };
    });
  }

  /**
   * A run's status and last sequence without its row's JSON (the definition of a large workflow is costly to parse):
   * what a poll or an existence check needs.
   */
  async runHead(runId: string): Promise<{ status: RunStatus; lastSequence: number } | undefined> {
    await this.ready;
    const row = await this.db.get<{ status: RunStatus; last_seq: number | string }>(
      'SELECT status, last_seq FROM openwop_runs WHERE run_id = ?',
      [runId],
    );
    return row ? { status: row.status, lastSequence: Number(row.last_seq) } : undefined;
  }

  async getRun(runId: string): Promise<StoredRun | undefined> {
    await this.ready;
    const row = await this.db.get<RunRow>('SELECT * FROM openwop_runs WHERE run_id = ?', [runId]);
    return row ? toRun(row) : undefined;
  }

  /** Runs that are not terminal (to resume after a restart). */
  async activeRuns(): Promise<StoredRun[]> {
    await this.ready;
    const rows = await this.db.all<RunRow>(
      `SELECT * FROM openwop_runs WHERE status NOT IN ('completed', 'failed', 'cancelled') ORDER BY created_at, run_id`,
    );
    return rows.map(toRun);
  }

  /**
   * Runs newest first, optionally of one status and/or workflow; `after` continues below the (createdAt, runId) of
   * the last run of the previous page.
   */
  async listRuns(q: {
    status?: string;
    workflowId?: string;
    limit: number;
    after?: { createdAt: string; runId: string };
  }): Promise<StoredRun[]> {
    await this.ready;
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.status !== undefined) {
      where.push('status = ?');
      params.push(q.status);
    }
    if (q.workflowId !== undefined) {
      where.push('workflow_id = ?');
      params.push(q.workflowId);
    }
    if (q.after) {
      where.push('(created_at < ? OR (created_at = ? AND run_id < ?))');
      params.push(q.after.createdAt, q.after.createdAt, q.after.runId);
    }
    const rows = await this.db.all<RunRow>(
      `SELECT * FROM openwop_runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY created_at DESC, run_id DESC LIMIT ?`,
      [...params, q.limit],
    );
    return rows.map(toRun);
  }

  async childRuns(parentRunId: string): Promise<StoredRun[]> {
    await this.ready;
    const rows = await this.db.all<RunRow>('SELECT * FROM openwop_runs WHERE parent_run_id = ? ORDER BY run_id', [
      parentRunId,
    ]);
    return rows.map(toRun);
  }

  /** Updates the run row without an event (e.g. `cancelling`, which is not itself an event). */
  async patchRun(runId: string, patch: RunPatch, settle?: SettledRequest): Promise<void> {
    await this.ready;
    await this.write('patch_run', () =>
      this.db.tx(async (t) => {
        await this.fence?.check(t, runId);
        await this.applyPatch(t, runId, patch);
        if (settle) await this.settleIn(t, runId, settle);
      }),
    );
  }

  /** Settles a forwarded request that appends nothing (issue 19), under the run's fence. */
  async settleRequest(runId: string, settle: SettledRequest): Promise<void> {
    await this.ready;
    await this.write('settle_request', () =>
      this.db.tx(async (t) => {
        await this.fence?.check(t, runId);
        await this.settleIn(t, runId, settle);
      }),
    );
  }

  private async settleIn(t: Db, runId: string, settle: SettledRequest): Promise<void> {
    if (!this.requests)
      throw new HostError(ErrorCode.HOST_INTERNAL, 'forwarded requests need a shared PostgreSQL store', { runId });
    await this.requests.settle(t, runId, settle);
  }

  private async applyPatch(t: Db, runId: string, patch: RunPatch): Promise<void> {
    const cols: Array<[string, unknown]> = [];
    if (patch.status) cols.push(['status', patch.status]);
    if (patch.variables) cols.push(['variables', JSON.stringify(patch.variables)]);
    if (patch.error !== undefined) cols.push(['error', patch.error ? JSON.stringify(patch.error) : null]);
    if (patch.startedAt) cols.push(['started_at', patch.startedAt]);
    if (patch.completedAt) cols.push(['completed_at', patch.completedAt]);
    const sets = cols.map(([c]) => `${c} = ?`);
    const params = cols.map(([, v]) => v);
    if (!sets.length) return;
    await t.run(`UPDATE openwop_runs SET ${sets.join(', ')} WHERE run_id = ?`, [...params, runId]);
  }

  /**
   * Appends events to a run atomically with an optional run-row patch. Sequences continue from the
   * run's last one; a terminal run refuses further events (one terminal event, last). Appends of any runs made while
   * a commit is in flight share the next transaction (group commit, {@link AppendBatcher}); each resolves once its
   * own transaction has committed.
   */
  append(
    runId: string,
    inputs: readonly AppendInput[],
    patch: RunPatch = {},
    /** A forwarded request these events apply (issue 19): settled in the same transaction, so exactly once. */
    settle?: SettledRequest,
  ): Promise<RunEvent[]> {
    const p = this.appendNow(runId, inputs, patch, settle);
    let pending = this.inFlight.get(runId);
    if (!pending) this.inFlight.set(runId, (pending = new Set()));
    pending.add(p);
    const settled = () => {
      pending.delete(p);
      if (!pending.size && this.inFlight.get(runId) === pending) this.inFlight.delete(runId);
    };
    // `settled` cannot throw; the caller owns `p` and its rejection.
    p.then(settled, settled);
    return p;
  }

  /** Settles once the appends of `runId` submitted so far have (committed or failed); undefined when there are none. */
  appendsInFlight(runId: string): Promise<void> | undefined {
    const pending = this.inFlight.get(runId);
    return pending ? Promise.allSettled([...pending]).then(() => undefined) : undefined;
  }

  private async appendNow(
    runId: string,
    inputs: readonly AppendInput[],
    patch: RunPatch,
    settle: SettledRequest | undefined,
  ): Promise<RunEvent[]> {
    await this.ready;
    const events = await this.write('append_events', () =>
      this.appends.submit((t) => this.appendIn(t, runId, inputs, patch, settle)),
    );
    this.emit(runId, events);
    return events;
  }

  private async appendIn(
    t: Db,
    runId: string,
    inputs: readonly AppendInput[],
    patch: RunPatch,
    settle: SettledRequest | undefined,
  ): Promise<RunEvent[]> {
    const schemas = openwopSchemas();
    await this.fence?.check(t, runId);
    await t.run('UPDATE openwop_runs SET last_seq = last_seq + ? WHERE run_id = ?', [inputs.length, runId]);
    const row = await t.get<{
      last_seq: number | string;
      status: RunStatus;
      event_log_schema_version: number | string | null;
    }>('SELECT last_seq, status, event_log_schema_version FROM openwop_runs WHERE run_id = ?', [runId]);
    if (!row) throw new HostError(ErrorCode.NOT_FOUND, `run ${runId} not found`, { runId });
    if (row.status === 'completed' || row.status === 'failed' || row.status === 'cancelled') {
      throw new HostError(ErrorCode.CONFLICT, `run ${runId} is ${row.status}`, { runId, status: row.status });
    }
    const era = row.event_log_schema_version === null ? null : Number(row.event_log_schema_version);
    let seq = Number(row.last_seq) - inputs.length + 1;
    const out: RunEvent[] = [];
    for (const input of inputs) {
      const e: RunEvent = {
        eventId: input.eventId ?? this.ids.next('event'),
        runId,
        sequence: seq++,
        type: input.type,
        payload: input.payload,
        timestamp: isoAt(this.clock.now()),
        engineVersion: ENGINE_VERSION,
      };
      if (input.nodeId) e.nodeId = input.nodeId;
      if (input.causationId) e.causationId = input.causationId;
      const issues = schemas.checkEvent(e);
      if (issues.length) {
        throw new HostError(ErrorCode.HOST_INTERNAL, `event ${e.type} does not match the OpenWOP schema`, {
          type: e.type,
          errors: issues,
        });
      }
      await t.run(
        'INSERT INTO openwop_events (run_id, sequence, event_id, type, node_id, causation_id, ts, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [
          runId,
          e.sequence,
          e.eventId,
          // The writer rule: an era-3 log is written in v2 vocabulary; the event handed back keeps the engine's name.
          storedType(era, e.type, e.sequence),
          e.nodeId ?? null,
          e.causationId ?? null,
          e.timestamp,
          JSON.stringify(e.payload),
        ],
      );
      out.push(e);
    }
    await this.applyPatch(t, runId, patch);
    if (settle) await this.settleIn(t, runId, settle);
    if (patch.status && TERMINAL_STATUSES.has(patch.status)) await this.fence?.end(t, runId);
    if (out.length) await this.notifier?.appended(t, runId, out[0]!.sequence, out[out.length - 1]!.sequence);
    return out;
  }

  private emit(runId: string, events: readonly RunEvent[]): void {
    const r = this.relayed.get(runId);
    for (const e of events) {
      if (r && e.sequence > r.last) r.last = e.sequence;
      this.bus.emit(runId, e);
    }
  }

  /**
   * Another process appended events to `runId` from `fromSequence` on (or, without it, may have: a catch-up after a
   * lost notification channel). When this process has subscribers of the run, reads the new events from the store and
   * emits them to those subscribers in order (a catch-up may repeat some); reads of one run are serialised.
   */
  relay(runId: string, fromSequence?: number): Promise<void> {
    if (this.bus.listenerCount(runId) === 0) return Promise.resolve();
    let r = this.relayed.get(runId);
    if (!r) {
      r = { last: (fromSequence ?? 0) - 1, reading: Promise.resolve() };
      this.relayed.set(runId, r);
    }
    const state = r;
    const read = state.reading.then(async () => {
      if (this.bus.listenerCount(runId) === 0) return;
      const events = await this.events(runId, state.last);
      this.emit(
        runId,
        events.filter((e) => e.sequence > state.last),
      );
    });
    state.reading = read.catch(() => undefined);
    return read;
  }

  /** Runs with local subscribers (to catch up after the notification channel was lost). */
  subscribedRuns(): string[] {
    return this.bus.eventNames().filter((n): n is string => typeof n === 'string');
  }

  /**
   * Events of a run with `sequence > afterSequence`, in order: all of them, read page by page, unless `limit` asks
   * for at most that many.
   */
  async events(runId: string, afterSequence = -1, limit?: number): Promise<RunEvent[]> {
    await this.ready;
    if (limit !== undefined) return this.eventPage(runId, afterSequence, limit);
    const out: RunEvent[] = [];
    for (let after = afterSequence; ;) {
      const page = await this.eventPage(runId, after, EVENT_PAGE);
      for (const e of page) out.push(e);
      if (page.length < EVENT_PAGE) return out;
      after = page[page.length - 1]!.sequence;
    }
  }

  private async eventPage(runId: string, afterSequence: number, limit: number): Promise<RunEvent[]> {
    // Each row with its run's era key (the storage boundary of persistence.md: every reader passes here).
    const rows = await this.db.all<EventRow & { event_log_schema_version: number | string | null }>(
      `SELECT e.*, r.event_log_schema_version FROM openwop_events e JOIN openwop_runs r ON r.run_id = e.run_id
       WHERE e.run_id = ? AND e.sequence > ? ORDER BY e.sequence LIMIT ?`,
      [runId, afterSequence, limit],
    );
    return rows.map((r) => toEvent(r, r.event_log_schema_version === null ? null : Number(r.event_log_schema_version)));
  }

  /**
   * Calls `fn` for each event appended to `runId` after now, by this process or (relayed, see {@link relay}) by another
   * process of a shared store; an event may be delivered twice after a catch-up. Returns the unsubscribe.
   */
  subscribe(runId: string, fn: (e: RunEvent) => void): () => void {
    this.bus.on(runId, fn);
    return () => {
      this.bus.off(runId, fn);
      if (this.bus.listenerCount(runId) === 0) this.relayed.delete(runId);
    };
  }
}
