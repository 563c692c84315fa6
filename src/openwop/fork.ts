import { ErrorCode, H, HostError, isoAt } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { Caller } from './node-registry.js';
import type { ForkMode, ForkStore } from './replay.js';
import { initialVariables } from './prepared-run.js';
import type { RunManager } from './run-manager.js';
import type { OpenwopStore, StoredRun } from './store.js';
import type { RunEvent, RunEventInput } from './types.js';

/** Body of `POST /v1/runs/{runId}:fork` (replay.md §Endpoint). */
export interface ForkRequest {
  mode: ForkMode;
  /** Events `< fromSeq` are fixed history, copied into the fork; default 0 for `replay`, required for `branch`. */
  fromSeq?: number;
  /** `branch` only (`configurable`, `tags`, `metadata` are honoured); MUST be absent or empty for `replay`. */
  runOptionsOverlay?: { configurable?: Record<string, unknown>; tags?: string[]; metadata?: Record<string, unknown> };
}

/** The fork response (replay.md §Response). */
export interface ForkResponse {
  runId: string;
  sourceRunId: string;
  fromSeq: number;
  mode: ForkMode;
  status: string;
  eventsUrl: string;
}

/** What {@link forkRun} needs from the host. */
export interface ForkDeps {
  store: OpenwopStore;
  forks: ForkStore;
  runs: RunManager;
  clock: Clock;
}

function invalid(message: string, path: string, details: Record<string, unknown> = {}): HostError {
  return new HostError(ErrorCode.VALIDATION_ERROR, message, { errors: [{ path, message }], ...details });
}

/**
 * Forks `sourceRunId` (replay.md, RFC 0140): a new run of the source's definition and inputs whose log starts with the
 * source's events `< fromSeq` (re-appended with new ids, payloads unchanged), whose lineage (`metadata.forkedFrom` on
 * the run row, the `openwop_forks` row) is recorded before its actor starts, and which then continues live: in `replay` mode side-effecting nodes resolve from
 * the source's recorded outcomes (replay.ts); in `branch` mode everything executes live under the overlay.
 * Raises `not_found` (unknown source) and `validation_error` (bad body) and `fork_point_invalid` (`fromSeq` past the source log, 422).
 */
export async function forkRun(
  deps: ForkDeps,
  sourceRunId: string,
  req: ForkRequest,
  caller: Caller,
  idempotencyKey?: string,
): Promise<{ fork: ForkResponse; created: boolean }> {
  const source = await deps.store.getRun(sourceRunId);
  if (!source) throw new HostError(ErrorCode.NOT_FOUND, `run ${sourceRunId} not found`, { runId: sourceRunId });
  const overlay = req.runOptionsOverlay ?? {};
  if (req.mode === 'replay' && Object.keys(overlay).length)
    throw invalid('a replay fork takes no runOptionsOverlay', '/runOptionsOverlay');
  if (req.mode === 'branch' && req.fromSeq === undefined) throw invalid('a branch fork needs fromSeq', '/fromSeq');
  const fromSeq = req.fromSeq ?? 0;
  if (fromSeq > source.lastSequence)
    throw new HostError(ErrorCode.FORK_POINT_INVALID, `fromSeq ${fromSeq} is past the source's last event`, {
      errors: [{ path: '/fromSeq', message: 'past the end of the source log' }],
      sourceRunId,
      lastSequence: source.lastSequence,
    });
  const prefix = fromSeq > 0 ? await deps.store.events(sourceRunId, -1, fromSeq) : [];
  const forkedFrom = { sourceRunId, mode: req.mode, fromSeq };
  const metadata = { ...source.metadata, ...overlay.metadata, forkedFrom };
  const variables = initialVariables(source.definition, source.inputs);
  const { run, created } = await deps.runs.startPrepared(
    {
      def: source.definition,
      inputs: source.inputs,
      variables,
      principal: caller.principal,
      idempotencyKey: idempotencyKey ? `fork:${caller.principal}:${idempotencyKey}` : null,
      requestDigest: H({ sourceRunId, ...req } as unknown as Record<string, unknown>),
      tags: [...source.tags, ...(overlay.tags ?? [])],
      metadata,
      configurable: { ...source.configurable, ...overlay.configurable },
    },
    async (r) => {
      await deps.forks.record({ runId: r.runId, sourceRunId, mode: req.mode, fromSeq });
      if (prefix.length) await copyPrefix(deps, r, prefix, variables);
    },
  );
  const snap = await deps.store.getRun(run.runId);
  return {
    fork: {
      runId: run.runId,
      sourceRunId,
      fromSeq,
      mode: req.mode,
      status: snap?.status ?? run.status,
      eventsUrl: `/v1/runs/${run.runId}/events`,
    },
    created,
  };
}

/**
 * Re-appends the source's fixed history to the fork (copy-on-write, replay.md §"Replay-from-event-log internals"):
 * same types, payloads and node ids, causation re-pointed at the copies; the row gets the projected variables.
 */
async function copyPrefix(
  deps: ForkDeps,
  run: StoredRun,
  prefix: readonly RunEvent[],
  variables: Record<string, unknown>,
): Promise<void> {
  const ids = new Map<string, string>();
  const vars = { ...variables };
  for (const e of prefix) {
    // Byte-equivalent to the source's (replay.md §C.1: events `< fromSeq` modulo clocks and fresh ids), so the copied
    // `run.started` keeps the source's payload; the lineage is on the fork's run row (snapshot `metadata.forkedFrom`).
    const input: RunEventInput = { type: e.type, payload: e.payload };
    if (e.nodeId) input.nodeId = e.nodeId;
    if (e.causationId) input.causationId = ids.get(e.causationId) ?? e.causationId;
    if (e.type === 'variable.changed') vars[e.payload.name as string] = e.payload.next;
    const [copy] = await deps.store.append(
      run.runId,
      [input],
      e.type === 'run.started' ? { status: 'running', startedAt: isoAt(deps.clock.now()) } : {},
    );
    ids.set(e.eventId, copy!.eventId);
  }
  await deps.store.patchRun(run.runId, { variables: vars });
}
