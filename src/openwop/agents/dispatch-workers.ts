import { initialTransition, transition } from 'xstate';
import type { AnyMachineSnapshot } from 'xstate';
import { eventForPhase, handoffMachine } from '../../../machines/handoff.js';
import type { ChainRecord, HandoffEvent, HandoffState } from '../../../machines/handoff.js';
import { HostError } from '../../core/index.js';
import type { NodeContext } from '../node-registry.js';
import type { RunEvent } from '../types.js';
import { emitOnce } from './emit-once.js';

/** `core.workflowChain.event` (RFC 0037 transition records). */
export const CHAIN_EVENT = 'core.workflowChain.event';

/** `{childVar: parentVar}` / `{parentVar: childVar}` maps of a dispatch (RFC 0022 §A), with per-worker overrides. */
export interface DispatchMappings {
  inputMapping: Record<string, string>;
  outputMapping: Record<string, string>;
  perWorkerInputMappings: Record<string, Record<string, string>>;
  perWorkerOutputMappings: Record<string, Record<string, string>>;
}

/** How one worker ended. */
export interface WorkerOutcome {
  workerId: string;
  childRunId?: string;
  /** `handoffState` is the final state of the worker's handoff machine. */
  handoffState: HandoffState;
  childStatus: 'completed' | 'failed' | 'cancelled';
  harvestedKeys: string[];
}

function strMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

/** Reads the mapping keys of a `core.dispatch` config. */
export function dispatchMappings(config: Record<string, unknown>): DispatchMappings {
  const per = (v: unknown): Record<string, Record<string, string>> => {
    const out: Record<string, Record<string, string>> = {};
    if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) out[k] = strMap(x);
    return out;
  };
  return {
    inputMapping: strMap(config.inputMapping),
    outputMapping: strMap(config.outputMapping),
    perWorkerInputMappings: per(config.perWorkerInputMappings),
    perWorkerOutputMappings: per(config.perWorkerOutputMappings),
  };
}

/** RFC 0022 §A `effectiveInputMapping` / `effectiveOutputMapping`: the per-worker map overrides the default. */
export function effectiveMappings(
  m: DispatchMappings,
  workerId: string,
): { input: Record<string, string>; output: Record<string, string> } {
  return {
    input: m.perWorkerInputMappings[workerId] ?? m.inputMapping,
    output: m.perWorkerOutputMappings[workerId] ?? m.outputMapping,
  };
}

/** Child variables copied into the parent: undefined ones are neither copied nor overwrite (RFC 0022 §B). */
export function harvest(
  output: Record<string, string>,
  childVariables: Record<string, unknown>,
): { values: Record<string, unknown>; keys: string[] } {
  const values: Record<string, unknown> = {};
  for (const [parentVar, childVar] of Object.entries(output)) {
    if (childVariables[childVar] !== undefined) values[parentVar] = childVariables[childVar];
  }
  return { values, keys: Object.keys(values) };
}

/** A worker's machine snapshot plus the event ids of the phases it recorded (causation links). */
class WorkerHandoff {
  snapshot: AnyMachineSnapshot;
  readonly ids = new Map<string, string>();
  constructor(workerId: string, parentRunId: string, hasOutputMapping: boolean, decidedEventId: string | undefined) {
    [this.snapshot] = initialTransition(handoffMachine, { workerId, parentRunId, hasOutputMapping });
    if (decidedEventId) this.ids.set('decided', decidedEventId);
  }

  get state(): HandoffState {
    return this.snapshot.value as HandoffState;
  }

  get done(): boolean {
    return this.snapshot.status === 'done';
  }

  /** Decides a transition without doing it: the next snapshot and the chain record it emits (if any). */
  decide(ev: HandoffEvent): { next: AnyMachineSnapshot; record?: ChainRecord } {
    const [next, actions] = transition(handoffMachine, this.snapshot as never, ev);
    const chain = actions.find((a) => a.type === 'chain') as { params?: ChainRecord } | undefined;
    return chain?.params ? { next, record: chain.params } : { next };
  }

  /** Replays a recorded chain event; false when it is not this worker's next transition. */
  replay(e: RunEvent): boolean {
    const payload = e.payload as ChainRecord['payload'];
    const { next, record } = this.decide(eventForPhase(payload.phase, payload));
    if (!record || record.payload.workerId !== payload.workerId) return false;
    this.snapshot = next;
    this.ids.set(record.phase, e.eventId);
    return true;
  }

  /** Applies a transition and appends its `core.workflowChain.event`, caused by the prior transition. */
  async apply(ctx: NodeContext, ev: HandoffEvent): Promise<void> {
    const { next, record } = this.decide(ev);
    this.snapshot = next;
    if (!record) return;
    const causationId = this.ids.get(record.causedBy);
    const [e] = await ctx.emit([
      { type: CHAIN_EVENT, ...(causationId ? { causationId } : {}), payload: record.payload },
    ]);
    this.ids.set(record.phase, e!.eventId);
  }
}

/**
 * Dispatches `workers` as child runs one after another (`fanOutPolicy: sequential`), each through its handoff
 * machine, harvesting outputs into the parent variable bag that the next worker's inputMapping reads (the
 * handoff channel, RFC 0022 §D). Resumable: the chain events this activation already recorded are replayed
 * through the machines first, children are found again by a deterministic key, and a finished worker's
 * harvest is recomputed from its stored child variables. The child carries the parent's causation (the
 * `dispatch.began` event) in its metadata and continues the dispatch node's trace.
 */
export async function dispatchWorkers(
  ctx: NodeContext,
  o: { workers: readonly string[]; decidedEventId?: string; mappings: DispatchMappings; hostId: string },
): Promise<{ outcomes: WorkerOutcome[]; variables: Record<string, unknown> }> {
  const recordedChain = ctx.history.filter((e) => e.type === CHAIN_EVENT);
  let cursor = 0;
  const vars: Record<string, unknown> = { ...ctx.variables };
  const changed: Record<string, unknown> = {};
  const outcomes: WorkerOutcome[] = [];
  for (const [i, workerId] of o.workers.entries()) {
    const maps = effectiveMappings(o.mappings, workerId);
    const w = new WorkerHandoff(workerId, ctx.runId, Object.keys(maps.output).length > 0, o.decidedEventId);
    while (cursor < recordedChain.length && !w.done && w.replay(recordedChain[cursor]!)) cursor++;
    let childVars: Record<string, unknown> = {};
    let childStatus: WorkerOutcome['childStatus'] = 'failed';
    let harvestedKeys: string[] = [];
    for (;;) {
      const st = w.state;
      if (st === 'pending') await w.apply(ctx, { type: 'handoff.begin' });
      else if (st === 'dispatching') {
        const seed: Record<string, unknown> = {};
        for (const [childVar, parentVar] of Object.entries(maps.input)) seed[childVar] = vars[parentVar];
        try {
          const { runId } = await ctx.children.start({
            workflowId: workerId,
            variables: seed,
            parentRunId: ctx.runId,
            parentNodeId: ctx.node.id,
            key: `${ctx.runId}:${ctx.node.id}:${ctx.activation}:${i}`,
            metadata: {
              causation: {
                parentRunId: ctx.runId,
                parentNodeId: ctx.node.id,
                eventId: w.ids.get('dispatch.began'),
                hostId: o.hostId,
              },
            },
            ...(ctx.traceparent ? { traceparent: ctx.traceparent } : {}),
          });
          await w.apply(ctx, { type: 'handoff.created', childRunId: runId });
        } catch (err) {
          // Only a refusal of this worker is a dispatch.failed; a host shutting down or a cancelled run is not.
          if (!(err instanceof HostError) || err.retryable || ctx.signal.aborted) throw err;
          const { error: code, message } = err.toEnvelope();
          await w.apply(ctx, { type: 'handoff.createFailed', error: { code, message: message || code } });
        }
      } else if (st === 'running' || st === 'harvesting' || st === 'completed' || st === 'harvested') {
        const childRunId = (w.snapshot.context as { childRunId: string }).childRunId;
        const child = await ctx.children.settled(childRunId);
        childVars = child.variables;
        if (st !== 'running') {
          childStatus = 'completed';
          if (st === 'harvesting') {
            await w.apply(ctx, { type: 'handoff.harvested', keys: harvest(maps.output, childVars).keys });
          }
          break;
        }
        const err = child.error as { code?: string; message?: string } | null;
        const envelope = { code: err?.code ?? child.status, message: err?.message || `child run ${child.status}` };
        if (child.status === 'completed') await w.apply(ctx, { type: 'handoff.childCompleted' });
        else if (child.status === 'cancelled') await w.apply(ctx, { type: 'handoff.childCancelled', error: envelope });
        else await w.apply(ctx, { type: 'handoff.childFailed', error: envelope });
      } else {
        childStatus = st === 'cancelled' ? 'cancelled' : 'failed';
        break;
      }
    }
    if (childStatus === 'completed' && Object.keys(maps.output).length) {
      const h = harvest(maps.output, childVars);
      Object.assign(vars, h.values);
      Object.assign(changed, h.values);
      harvestedKeys = h.keys;
    }
    const childRunId = (w.snapshot.context as { childRunId: string | null }).childRunId;
    // RFC 0007 §D: one node.dispatched per spawned child, naming it and how it ended; once, also across a resume.
    if (childRunId) {
      await emitOnce(
        ctx,
        { type: 'node.dispatched', payload: { childRunId, childWorkflowId: workerId, childStatus } },
        (e) => e.payload.childRunId === childRunId,
      );
    }
    outcomes.push({
      workerId,
      ...(childRunId ? { childRunId } : {}),
      handoffState: w.state,
      childStatus,
      harvestedKeys,
    });
  }
  return { outcomes, variables: changed };
}
