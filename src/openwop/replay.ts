import { ErrorCode, isoAt, jcs } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { migrate } from '../ledger/index.js';
import type { Db } from '../ledger/index.js';
import { NodeFailure } from './node-registry.js';
import type { NodeContext, NodeModule, NodeResult } from './node-registry.js';
import { recordedExecution } from './replay-outcomes.js';
import type { RecordedExecution } from './replay-outcomes.js';
import type { ServiceFamily } from './service-family.js';
import type { OpenwopStore } from './store.js';

/** Fork modes (replay.md §"Two modes"). */
export type ForkMode = 'replay' | 'branch';

/** A fork's lineage: the run it was forked from, how, and from which sequence. */
export interface ForkRecord {
  runId: string;
  sourceRunId: string;
  mode: ForkMode;
  fromSeq: number;
}

/** The nondeterminism sources a pure node may draw through `ctx.checkpoint`; a replay fork reproduces each. */
export const NONDETERMINISM_SOURCES = ['clock', 'random', 'id'] as const;

const FORKS_DDL = `
CREATE TABLE IF NOT EXISTS openwop_forks (
  run_id TEXT PRIMARY KEY,
  source_run_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  from_seq BIGINT NOT NULL,
  created_at TEXT NOT NULL
);
`;

/**
 * Fork lineage over the shared `Db` (table `openwop_forks`, migration `openwop.forks.v1`): written before the fork's
 * actor starts and never changed, so a fork resumed after a restart is still a replay.
 */
export class ForkStore {
  private readonly ready: Promise<void>;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.ready = migrate(db, 'openwop.forks.v1', () => FORKS_DDL).then(() => undefined);
  }

  init(): Promise<void> {
    return this.ready;
  }

  async record(f: ForkRecord): Promise<void> {
    await this.ready;
    await this.db.run(
      'INSERT INTO openwop_forks (run_id, source_run_id, mode, from_seq, created_at) VALUES (?, ?, ?, ?, ?)',
      [f.runId, f.sourceRunId, f.mode, f.fromSeq, isoAt(this.clock.now())],
    );
  }

  async get(runId: string): Promise<ForkRecord | undefined> {
    await this.ready;
    const r = await this.db.get<{ run_id: string; source_run_id: string; mode: ForkMode; from_seq: number | string }>(
      'SELECT * FROM openwop_forks WHERE run_id = ?',
      [runId],
    );
    return r ? { runId: r.run_id, sourceRunId: r.source_run_id, mode: r.mode, fromSeq: Number(r.from_seq) } : undefined;
  }
}

/** How a replay fork stands: its source, or `null` when its lineage row is missing (every effect then fails closed). */
type ReplayOf = { sourceRunId: string | null } | undefined;

function missing(sourceRunId: string | null, nodeId: string, execution: number): NodeFailure {
  return new NodeFailure(ErrorCode.REPLAY_SOURCE_MISSING, 'the source run has no recorded outcome for this node', {
    sourceRunId,
    nodeId,
    execution,
  });
}

/**
 * Side-effect suppression in `mode: "replay"` forks (replay.md §"Side-effect suppression in replay", RFC 0140):
 * classification is default-deny (a node not marked `pure`, or pinned to an agent, is side-effecting, so the MHS, MCP,
 * AI, agent, interrupt and child-run nodes never execute in a replay) and each side-effecting execution resolves from the source run's recorded
 * outcome for the same node and execution ordinal, or fails `replay_source_missing`. Pure nodes re-execute live with
 * their `ctx.checkpoint` draws reproduced and every host service surface guarded (rule 6b).
 */
export class ReplayControl {
  private readonly cache = new Map<string, ReplayOf>();

  constructor(
    private readonly store: OpenwopStore,
    private readonly forks: ForkStore,
    private readonly isPure: (typeId: string) => boolean,
  ) {}

  /** The replay lineage of `runId`, undefined when it is not a replay fork. */
  async replayOf(runId: string): Promise<ReplayOf> {
    if (this.cache.has(runId)) return this.cache.get(runId);
    const f = await this.forks.get(runId);
    let r: ReplayOf;
    if (f) r = f.mode === 'replay' ? { sourceRunId: f.sourceRunId } : undefined;
    else {
      // A fork whose lineage row was never written (a crash in between) still says so in its metadata: fail closed.
      const meta = (await this.store.getRun(runId))?.metadata.forkedFrom as { mode?: unknown } | undefined;
      r = meta?.mode === 'replay' ? { sourceRunId: null } : undefined;
    }
    if (this.cache.size >= 10_000) this.cache.clear(); // lineage never changes: the cache only saves lookups
    this.cache.set(runId, r);
    return r;
  }

  async isReplay(runId: string): Promise<boolean> {
    return (await this.replayOf(runId)) !== undefined;
  }

  /** The service family that installs the suppression around every node (outermost wrap). */
  family(): ServiceFamily {
    return {
      name: 'replay',
      capabilities: () => ({
        replay: {
          supported: true,
          modes: ['replay', 'branch'],
          sideEffectSuppression: 'recorded-outcome',
          nondeterminismSources: [...NONDETERMINISM_SOURCES],
        },
      }),
      wrap: (_node, mod) => this.wrap(mod),
    };
  }

  private wrap(mod: NodeModule): NodeModule {
    return {
      ...mod,
      execute: async (ctx) => {
        const replay = await this.replayOf(ctx.runId);
        if (!replay) return mod.execute(ctx);
        const execution = await this.ordinal(ctx);
        const source = replay.sourceRunId;
        const rec = source ? recordedExecution(await this.store.events(source), ctx.node.id, execution) : undefined;
        // An agent-pinned node runs under the agent layer (an agent invocation): side-effecting whatever its type.
        // A node configured `nondeterministic: true` is replayed from the log, never re-executed (RFC 0041 §C).
        if (this.isPure(ctx.node.typeId) && ctx.node.agent === undefined && ctx.node.config.nondeterministic !== true)
          return recordedDuration(
            await live(
              mod,
              guarded(ctx, rec, () => missing(source, ctx.node.id, execution)),
              rec,
              source,
            ),
            rec,
          );
        if (mod.replayCheck && source && ctx.node.agent === undefined) await mod.replayCheck(ctx, rec, source);
        return recordedDuration(resolve(rec, source, ctx.node.id, execution), rec);
      },
    };
  }

  /** n of this execution: the count of the node's `node.started` in the fork's own log (its prefix copied from the source). */
  private async ordinal(ctx: NodeContext): Promise<number> {
    const events = await this.store.events(ctx.runId);
    return events.filter((e) => e.type === 'node.started' && e.nodeId === ctx.node.id).length;
  }
}

/**
 * Runs a pure node live and reports a divergence from the source's recorded outcome for the same execution as
 * `replay.diverged` (informational, the run continues: replay.md §"Failure surfaces"): `output` for other outputs,
 * `type-mismatch` for another kind of ending (completed vs failed/cancelled, another error code), `extra` when the
 * source recorded no ending.
 */
async function live(
  mod: NodeModule,
  ctx: NodeContext,
  rec: RecordedExecution | undefined,
  sourceRunId: string | null,
): Promise<NodeResult> {
  const o = rec?.outcome;
  const diverged = async (divergenceKind: 'output' | 'type-mismatch' | 'extra'): Promise<void> => {
    if (!sourceRunId) return;
    await ctx.emit([
      {
        type: 'replay.diverged',
        payload: {
          sourceRunId,
          atSequence: o ? o.sequence : rec ? rec.startedSequence : 0,
          ...(o ? { originalEventId: o.eventId } : {}),
          divergenceKind,
          nodeId: ctx.node.id,
        },
      },
    ]);
  };
  let result: NodeResult;
  try {
    result = await mod.execute(ctx);
  } catch (err) {
    if (err instanceof NodeFailure) {
      if (!o) await diverged('extra');
      else if (o.kind !== 'failed' || o.error.code !== err.code) await diverged('type-mismatch');
    }
    throw err;
  }
  if (!o) await diverged('extra');
  else if (o.kind !== 'completed') await diverged('type-mismatch');
  else if (jcs(result.outputs ?? {}) !== jcs(o.outputs)) await diverged('output');
  return result;
}

/** A replayed node reports the source's recorded `durationMs`, not a re-measured one: two replays stay identical. */
function recordedDuration(result: NodeResult, rec: RecordedExecution | undefined): NodeResult {
  const o = rec?.outcome;
  if (o?.kind !== 'completed' || o.durationMs === undefined) return result;
  return { ...result, completedInfo: { ...result.completedInfo, durationMs: o.durationMs } };
}

/** The recorded outcome as this execution's result (rule 2), or the fail-closed `replay_source_missing` (rule 3). */
function resolve(
  rec: RecordedExecution | undefined,
  sourceRunId: string | null,
  nodeId: string,
  execution: number,
): NodeResult {
  const o = rec?.outcome;
  if (!o || o.kind === 'cancelled' || !sourceRunId) throw missing(sourceRunId, nodeId, execution);
  const replayedFrom = { sourceRunId, eventId: o.eventId, execution };
  if (o.kind === 'failed') {
    throw new NodeFailure(o.error.code, o.error.message, o.error.details ?? {}, { ...o.info, replayedFrom });
  }
  return {
    outputs: o.outputs,
    ...(Object.keys(o.variables).length ? { variables: o.variables } : {}),
    completedInfo: { ...o.info, replayedFrom },
    ...(o.exitLoop ? { exitLoop: true } : {}),
  };
}

const SURFACES = ['aiEnvelope', 'promptLibrary', 'agentRuntime', 'mcp'] as const;

/**
 * A pure node's context in a replay: `ctx.checkpoint` returns the source's recorded draw (after the fork's own, so a
 * restart keeps it), and every effect seam a node could reach (host service surfaces, child runs) fails closed.
 */
function guarded(ctx: NodeContext, rec: RecordedExecution | undefined, deny: () => NodeFailure): NodeContext {
  const g = Object.create(ctx) as Record<string, unknown>;
  const recorded = rec?.checkpoints ?? new Map<string, unknown>();
  g.checkpoint = <T>(name: string, value: () => T): Promise<T> =>
    ctx.checkpoint(name, () => (recorded.has(name) ? (recorded.get(name) as T) : value()));
  const refuse = new Proxy({}, { get: () => () => Promise.reject(deny()) });
  for (const s of SURFACES) if (ctx[s] !== undefined) g[s] = refuse;
  g.children = { start: () => Promise.reject(deny()), settled: () => Promise.reject(deny()) };
  return g as unknown as NodeContext;
}

/** A replay fork ending as its source did reports the source's `durationMs` (replay.md: replays are identical). */
export async function recordedRunDuration(
  store: OpenwopStore,
  metadata: Record<string, unknown>,
  status: 'completed' | 'failed' | 'cancelled',
): Promise<number | undefined> {
  const from = metadata.forkedFrom as { sourceRunId?: unknown; mode?: unknown } | undefined;
  if (from?.mode !== 'replay' || typeof from.sourceRunId !== 'string') return undefined;
  const end = (await store.events(from.sourceRunId)).find((e) => e.type === `run.${status}`);
  return typeof end?.payload.durationMs === 'number' ? end.payload.durationMs : undefined;
}
