import { ErrorCode, GENESIS_PREV_DIGEST, HostError, assertJcsEncodable, isoAt, sealWithText } from '../core/index.js';
import type { ChainCheck, Clock, TimerHandle } from '../core/index.js';
import type { Db } from './db.js';
import { ensureLedgerSchema } from './ledger-schema.js';
import { insertEntries, verifyStored } from './ledger-rows.js';
import { LEDGER_KINDS } from './ledger-types.js';
import type { AppendOptions, DurableLedger, LedgerAppend, LedgerEntry, LedgerStatus } from './ledger-types.js';
import { GATE_OWNER, claimGate, heldGates, projectGate, takeOverGate } from './device-gates.js';
import type { DurableGate } from './device-gates.js';
import { gateEffect } from './gate-projection.js';
import { HostLease, ownerStatus } from './host-leases.js';
import { SqliteDb } from './sqlite-db.js';
import { StoredRangeReader } from './stored-range-reader.js';
import type { LeaseTiming } from './host-leases.js';
import { inCommitSpan } from './commit-span.js';
import { LedgerHealth, ledgerUnavailable } from './ledger-health.js';
import { redactPaths, scrubSecretsInPlace } from './redaction.js';
import { openApprovals, permitSent, projectUnsettled, unsettledRows } from './unsettled.js';
import type { OpenApproval, UnsettledRow } from './unsettled.js';

/** Options of {@link openLedger}. */
export interface LedgerOptions {
  clock: Clock;
  /** Fields added to the genesis entry when this call creates it. */
  genesis?: Record<string, unknown>;
  /** Redaction paths per endpoint id (the adapters' manifest `redaction.paths`, HOST-056). */
  redaction?: Record<string, readonly string[]>;
  /** Most entries committed in one transaction by the writer (default 512). */
  maxBatch?: number;
  /**
   * While unavailable, probe the store this often (ms, on the injected clock) so the ledger
   * recovers by itself once the store can be written again (default 5 000; 0 disables).
   */
  probeIntervalMs?: number;
  /**
   * Names this host process on the device gates it claims (default `hostname:pid`). Two processes must never
   * share one: give each container or machine its own when hostnames can repeat.
   */
  owner?: string;
  /** The lease by which hosts on other machines tell this process is running (HOST-091 on a shared store). */
  lease?: LeaseTiming;
  /**
   * Where a failed lease renewal is reported, as `MHS.HOST.LEDGER_UNAVAILABLE` (it also makes {@link
   * DurableLedger.status} unavailable until a probe succeeds, and is retried at the next renewal).
   */
  onLeaseError?: (err: HostError) => void;
}

interface Job {
  items: Record<string, unknown>[];
  /** Effectful intents of this job claim their device gates; a held gate fails this job alone. */
  claimGates: boolean;
  /** Runs first in this job's savepoint; its refusal fails this job alone (issue 19, {@link AppendOptions.fence}). */
  fence?: ((t: Db) => Promise<void>) | undefined;
  resolve: (e: LedgerEntry[]) => void;
  reject: (err: unknown) => void;
}

const RESERVED = ['seq', 'prev_digest', 'ts', 'digest'] as const;
const KINDS = new Set<string>(LEDGER_KINDS);
const WRITER_ONLY = new Set(['genesis', 'checkpoint']);

/**
 * The host ledger over a {@link Db} (HOST-050…052, 092, 093). One writer per ledger: appends queue
 * and are committed in order by group commit (one transaction, one fsync for whatever is queued),
 * each resolving only after its commit. Across processes the chain head is read inside the write
 * transaction (SQLite's write lock; a PostgreSQL advisory lock), and the database refuses a fork: `seq` is the key,
 * and a row must link to the head (SQLite: the link trigger of lean-pages.ts; PostgreSQL: `UNIQUE(prev_digest)`).
 */
/** Refusals that fail the one job raising them (a held gate, a lost run or endpoint lease), never its batch. */
const JOB_REFUSALS: ReadonlySet<string> = new Set([
  ErrorCode.HOST_DEVICE_GATE_CLOSED,
  ErrorCode.HOST_RUN_LEASE_LOST,
  ErrorCode.HOST_ENDPOINT_LEASE_LOST,
]);

class SqlLedger implements DurableLedger {
  private readonly queue: Job[] = [];
  private flushing = false;
  private readonly redaction = new Map<string, readonly string[]>();
  private readonly health: LedgerHealth;
  readonly owner: string;
  private readonly lease: HostLease;

  constructor(
    readonly db: Db,
    private readonly opts: LedgerOptions,
  ) {
    this.health = new LedgerHealth(opts.clock, db.location);
    this.owner = opts.owner ?? GATE_OWNER;
    this.lease = new HostLease(db, opts.clock, this.owner, opts.lease, (err) => this.leaseFailed(err));
    for (const [id, paths] of Object.entries(opts.redaction ?? {})) this.redaction.set(id, paths);
    this.health.subscribe((st) => (st.state === 'unavailable' ? this.scheduleProbe() : this.cancelProbe()));
  }

  private probeTimer: TimerHandle | null = null;
  private disposed = false;

  /** HOST-093: a renewal the store refused is a store failure like any other: in status() and reported. */
  private leaseFailed(err: unknown): void {
    const e = ledgerUnavailable(err, this.db.location, { operation: 'lease_renewal', owner: this.owner });
    this.health.fail(e);
    try {
      this.opts.onLeaseError?.(e);
    } catch {
      // A reporter's fault must not stop the renewals.
    }
  }

  /** HOST-093: keep probing while unavailable, so the engine's refusal lifts once the store recovers. */
  private scheduleProbe(): void {
    const every = this.opts.probeIntervalMs ?? 5_000;
    if (every <= 0 || this.probeTimer || this.disposed) return;
    this.probeTimer = this.opts.clock.setTimeout(() => {
      this.probeTimer = null;
      void this.probe().then((st) => {
        if (st.state === 'unavailable') this.scheduleProbe();
      });
    }, every);
  }

  private cancelProbe(): void {
    if (this.probeTimer) this.opts.clock.clearTimeout(this.probeTimer);
    this.probeTimer = null;
  }

  dispose(): void {
    this.disposed = true;
    this.cancelProbe();
    void this.reader?.close().catch(() => undefined);
    this.reader = null;
    void this.lease.release(false).catch(() => undefined);
  }

  releaseLease(): Promise<void> {
    return this.lease.release();
  }

  ownerRunning(owner: string): Promise<boolean | null> {
    return ownerStatus(this.db, owner, this.opts.clock.now(), this.opts.lease?.skewMs);
  }

  status(): LedgerStatus {
    return this.health.current();
  }

  onStatus(fn: (s: LedgerStatus) => void): () => void {
    return this.health.subscribe(fn);
  }

  setRedaction(endpointId: string, paths: readonly string[]): void {
    this.redaction.set(endpointId, [...paths]);
  }

  async probe(): Promise<LedgerStatus> {
    try {
      await this.db.tx((t) => t.run('UPDATE ledger_probe SET n = n + 1 WHERE id = 1'));
      this.health.ok();
    } catch (err) {
      this.health.fail(ledgerUnavailable(err, this.db.location));
    }
    return this.status();
  }

  /** Validates and copies an append: JSON only, no reserved fields, secrets scrubbed, redacted. */
  private prepare(input: LedgerAppend, allowWriterKinds = false): Record<string, unknown> {
    if (
      !input ||
      typeof input !== 'object' ||
      !KINDS.has(input.kind) ||
      (WRITER_ONLY.has(input.kind) && !allowWriterKinds)
    ) {
      throw new HostError(ErrorCode.HOST_INTERNAL, 'not an appendable ledger entry kind', { kind: input?.kind });
    }
    for (const k of RESERVED) {
      if (k in input) throw new HostError(ErrorCode.HOST_INTERNAL, `ledger entries may not set ${k}`, { field: k });
    }
    let copy: Record<string, unknown>;
    let text: string;
    try {
      // A JSON round trip: a deep copy that the writer can always canonicalise (BigInt and cycles throw here).
      text = JSON.stringify(input);
      copy = JSON.parse(text) as Record<string, unknown>;
    } catch (err) {
      throw new HostError(ErrorCode.HOST_INTERNAL, 'ledger entry is not JSON', { kind: input.kind }, { cause: err });
    }
    // HOST-052: a receipt stays verbatim inside its wrapper; everything else loses credentials (HOST-056).
    scrubSecretsInPlace(copy, input.kind === 'receipt' ? ['receipt'] : []);
    const endpoint = copy['endpoint_id'];
    const paths = typeof endpoint === 'string' ? this.redaction.get(endpoint) : undefined;
    if (paths) redactPaths(copy, paths);
    // Issue 16 item 3: an entry JCS cannot encode is refused alone, before it reaches the writer; it is never a
    // store outage. Callers that know whose data it is map the code (API input, tool arguments, endpoint faults).
    // JSON.stringify writes a lone surrogate as a `\udXXX` escape (ES2019), so text without one has none to find.
    if (text.includes('\\ud'))
      assertJcsEncodable(copy, `ledger entry ${input.kind}`, ErrorCode.HOST_JSON_UNENCODABLE, {
        kind: input.kind,
        ...(typeof endpoint === 'string' ? { endpoint_id: endpoint } : {}),
      });
    return copy;
  }

  append(entry: LedgerAppend): Promise<LedgerEntry> {
    return this.appendBatch([entry]).then((r) => r[0] as LedgerEntry);
  }

  appendBatch(entries: readonly LedgerAppend[], opts: AppendOptions = {}): Promise<LedgerEntry[]> {
    return inCommitSpan(entries, () => this.appendNow(entries, opts));
  }

  private appendNow(entries: readonly LedgerAppend[], opts: AppendOptions): Promise<LedgerEntry[]> {
    let items: Record<string, unknown>[];
    try {
      items = entries.map((e) => this.prepare(e));
    } catch (err) {
      return Promise.reject(err);
    }
    if (items.length === 0) return Promise.resolve([]);
    // Hosts on other machines judge this process's gates by its lease: it is taken before the first claim.
    if (opts.claimGates === true && !this.lease.held)
      return this.lease.hold().then(
        () => this.submit(items, true, opts.fence),
        (err: unknown) => Promise.reject(ledgerUnavailable(err, this.db.location)),
      );
    return this.submit(items, opts.claimGates === true, opts.fence);
  }

  async appendIn(t: Db, entries: readonly LedgerAppend[], opts: AppendOptions = {}): Promise<LedgerEntry[]> {
    const items = entries.map((e) => this.prepare(e));
    if (opts.claimGates === true && !this.lease.held) await this.lease.hold(t);
    await opts.fence?.(t);
    return items.length ? this.writeIn(t, items, opts.claimGates === true) : [];
  }

  deviceGates(endpointId?: string): Promise<DurableGate[]> {
    return heldGates(this.db, endpointId);
  }

  unsettledIntents(): Promise<UnsettledRow[]> {
    return unsettledRows(this.db);
  }

  openApprovals(): Promise<OpenApproval[]> {
    return openApprovals(this.db);
  }

  permitSent(permitId: string): Promise<boolean> {
    return permitSent(this.db, permitId);
  }

  takeOverGate(commandId: string, from: string): Promise<boolean> {
    return takeOverGate(this.db, commandId, from, this.owner);
  }

  checkpoint(extra: Record<string, unknown> = {}): Promise<LedgerEntry> {
    // `sealed` is filled in by the writer with the head it follows.
    const item = this.prepare({ ...extra, kind: 'checkpoint' }, true);
    return this.submit([{ ...item, sealed: null }], false).then((r) => r[0] as LedgerEntry);
  }

  private submit(
    items: Record<string, unknown>[],
    claimGates: boolean,
    fence?: (t: Db) => Promise<void>,
  ): Promise<LedgerEntry[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ items, claimGates, fence, resolve, reject });
      if (this.flushing) return;
      this.flushing = true;
      // Appends made in the same tick (a receipt batch and the intent after it) share one commit.
      queueMicrotask(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    const max = this.opts.maxBatch ?? 512;
    let committed = false;
    while (this.queue.length) {
      // Appends queued during a commit mean a busy host: first let the I/O already waiting (other endpoints'
      // answers) queue theirs too, so they share this commit's fsync. An idle writer commits at once.
      if (committed && this.queue.length < max) await new Promise((r) => setImmediate(r));
      committed = true;
      const jobs: Job[] = [];
      let n = 0;
      while (this.queue.length && (jobs.length === 0 || n + (this.queue[0] as Job).items.length <= max)) {
        const j = this.queue.shift() as Job;
        jobs.push(j);
        n += j.items.length;
      }
      try {
        const results = await this.db.tx((t) => this.writeJobs(t, jobs));
        this.health.ok();
        jobs.forEach((j, i) => {
          const r = results[i] as LedgerEntry[] | HostError;
          if (r instanceof HostError) j.reject(r);
          else j.resolve(r);
        });
      } catch (err) {
        // An entry the writer cannot encode is that batch's fault, not the store's (issue 16 item 3).
        const entryFault = err instanceof HostError && err.code === ErrorCode.HOST_JSON_UNENCODABLE;
        const e = entryFault ? err : ledgerUnavailable(err, this.db.location);
        if (!entryFault) this.health.fail(e);
        for (const j of jobs) j.reject(e);
      }
    }
    this.flushing = false;
  }

  /**
   * Writes queued jobs in one transaction. A job that claims device gates runs in a savepoint: when a gate is held
   * (`MHS.HOST.DEVICE_GATE_CLOSED`) only that job is refused and the others still commit.
   */
  private async writeJobs(t: Db, jobs: Job[]): Promise<Array<LedgerEntry[] | HostError>> {
    const out: Array<LedgerEntry[] | HostError> = [];
    let plain: Job[] = [];
    const writePlain = async () => {
      if (!plain.length) return;
      const sealed = await this.writeIn(
        t,
        plain.flatMap((j) => j.items),
        false,
      );
      let at = 0;
      for (const j of plain) {
        out.push(sealed.slice(at, at + j.items.length));
        at += j.items.length;
      }
      plain = [];
    };
    for (const j of jobs) {
      if (!j.claimGates && !j.fence) {
        plain.push(j);
        continue;
      }
      await writePlain();
      // A lone one-entry job needs no savepoint: a refused claim (or fence) fails before anything is written.
      const lone = jobs.length === 1 && j.items.length === 1;
      const write = async (s: Db): Promise<LedgerEntry[]> => {
        await j.fence?.(s);
        return this.writeIn(s, j.items, j.claimGates);
      };
      try {
        out.push(await (lone ? write(t) : t.tx(write)));
      } catch (err) {
        const refused = err instanceof HostError && JOB_REFUSALS.has(err.code);
        if (!refused) throw err;
        out.push(err);
      }
    }
    await writePlain();
    return out;
  }

  /**
   * Seals `items` after the current head and inserts them, inside the transaction `t`, keeping the device gates in
   * step (HOST-091): settling entries reopen theirs; with `claimGates`, effectful intents claim theirs first.
   */
  private async writeIn(t: Db, items: Record<string, unknown>[], claimGates: boolean): Promise<LedgerEntry[]> {
    if (t.dialect === 'postgres') {
      await t.get(`SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.ledger_entries'))`);
    }
    const ts = isoAt(this.opts.clock.now());
    for (const item of items) {
      const fx = gateEffect(item as LedgerAppend);
      if (fx?.op === 'claim' && claimGates) await claimGate(t, fx, ts, this.owner);
      else await projectGate(t, fx);
    }
    const rows: LedgerEntry[] = [];
    const texts: string[] = [];
    let head = await t.get<{ seq: number; digest: string }>(
      'SELECT seq, digest FROM ledger_entries ORDER BY seq DESC LIMIT 1',
    );
    if (!head) {
      const g = sealWithText(this.genesisBody(ts));
      rows.push(g.entry as LedgerEntry);
      texts.push(g.text);
      head = g.entry as LedgerEntry;
    }
    let seq = head.seq;
    let prev = head.digest;
    for (const item of items) {
      const body = item['kind'] === 'checkpoint' ? { ...item, sealed: { seq, digest: prev } } : item;
      const s = sealWithText({ seq: ++seq, prev_digest: prev, ts, ...body });
      rows.push(s.entry as LedgerEntry);
      texts.push(s.text);
      prev = s.entry.digest;
    }
    await insertEntries(t, rows, texts);
    // Issue 21 item 4: the unsettled side tables move with the entries, in the same transaction.
    for (const r of rows) await projectUnsettled(t, r);
    return rows.slice(rows.length - items.length);
  }

  private genesisBody(ts: string): Record<string, unknown> {
    return {
      seq: 0,
      prev_digest: GENESIS_PREV_DIGEST,
      ts,
      kind: 'genesis',
      format: 'mhs-host.ledger',
      schema_version: 1,
      ...(this.opts.genesis ?? {}),
    };
  }

  /** Creates the genesis entry when the store has none (race-free: it goes through the writer). */
  async ensureGenesis(): Promise<void> {
    if (await this.db.get('SELECT seq FROM ledger_entries LIMIT 1')) return;
    await this.db.tx(async (t) => {
      if (t.dialect === 'postgres') {
        await t.get(`SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.ledger_entries'))`);
      }
      if (await t.get('SELECT seq FROM ledger_entries LIMIT 1')) return;
      const g = sealWithText(this.genesisBody(isoAt(this.opts.clock.now())));
      await insertEntries(t, [g.entry as LedgerEntry], [g.text]);
    });
  }

  private async one(sql: string, params: unknown[] = []): Promise<LedgerEntry> {
    const row = await this.db.get<{ line: string }>(sql, params);
    if (!row) throw new HostError(ErrorCode.HOST_INTERNAL, 'the ledger has no entries', {});
    return JSON.parse(row.line) as LedgerEntry;
  }

  private async many(sql: string, params: unknown[]): Promise<LedgerEntry[]> {
    const rows = await this.db.all<{ line: string }>(sql, params);
    return rows.map((r) => JSON.parse(r.line) as LedgerEntry);
  }

  head(): Promise<LedgerEntry> {
    return this.one('SELECT line FROM ledger_entries ORDER BY seq DESC LIMIT 1');
  }

  first(): Promise<LedgerEntry> {
    return this.one('SELECT line FROM ledger_entries ORDER BY seq ASC LIMIT 1');
  }

  /** Entries with `fromSeq <= seq <= toSeq` (to the head when `toSeq` is omitted), in order. */
  range(fromSeq: number, toSeq?: number): Promise<LedgerEntry[]> {
    return toSeq === undefined
      ? this.many('SELECT line FROM ledger_entries WHERE seq >= ? ORDER BY seq', [fromSeq])
      : this.many('SELECT line FROM ledger_entries WHERE seq >= ? AND seq <= ? ORDER BY seq', [fromSeq, toSeq]);
  }

  byCommand(commandId: string): Promise<LedgerEntry[]> {
    return this.many('SELECT line FROM ledger_entries WHERE command_id = ? ORDER BY seq', [commandId]);
  }

  bySession(sessionId: string): Promise<LedgerEntry[]> {
    return this.many('SELECT line FROM ledger_entries WHERE session_id = ? ORDER BY seq', [sessionId]);
  }

  /** The verifier's reader thread on a SQLite file (issue 21), started by the first verification. */
  private reader: StoredRangeReader | null = null;

  /** Recomputes every stored link, page by page; also checks each row's columns against its entry. */
  verify(): Promise<ChainCheck> {
    if (!this.reader && !this.disposed && this.db instanceof SqliteDb)
      this.reader = new StoredRangeReader(this.db.location);
    return verifyStored(this.db, this.reader ?? undefined);
  }
}

/**
 * Opens the ledger on `db`: creates its tables (append-only, HOST-051) and the genesis entry when
 * missing, then probes writability. A read-only store opens (for show/export) with status
 * `unavailable`; appends then reject with `MHS.HOST.LEDGER_UNAVAILABLE` (HOST-093).
 * Rejects with `MHS.HOST.LEDGER_UNAVAILABLE` only when the tables or genesis cannot be created.
 */
export async function openLedger(db: Db, opts: LedgerOptions): Promise<DurableLedger> {
  const ledger = new SqlLedger(db, opts);
  try {
    await ensureLedgerSchema(db);
    await ledger.ensureGenesis();
  } catch (err) {
    throw ledgerUnavailable(err, db.location);
  }
  await ledger.probe();
  return ledger;
}
