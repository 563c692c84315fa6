import type { Context } from '@opentelemetry/api';
import { SpanStatusCode } from '@opentelemetry/api';
import type { Db } from '../ledger/db.js';
import type { Clock } from '../core/index.js';
import { resolveInputs } from './expressions.js';
import type { ChildRuns, NodeRegistry, NodeResult } from './node-registry.js';
import { buildNodeContext } from './run-context.js';
import type { ContextHost } from './run-context.js';
import { prepareExecution } from './service-family.js';
import type { ServiceFamily } from './service-family.js';
import type { StoredRun } from './store.js';
import type { WorkflowNode } from './types.js';
import { startSpan } from './tracing.js';

/** How one node execution ended: its result, or what it threw (the run actor decides what that means). */
export type Outcome = { ok: true; result: NodeResult } | { ok: false; error: unknown };

/** What one execution of a node needs from its run. */
export interface NodeExecution {
  host: ContextHost;
  run: StoredRun;
  node: WorkflowNode;
  activation: number;
  /** Outputs of the run's completed nodes, by node id (for input expressions). */
  nodeOutputs: Record<string, Record<string, unknown> | undefined>;
  variables: Record<string, unknown>;
  resumed: boolean;
  clock: Clock;
  stop: AbortSignal;
  halt: AbortSignal;
  spanCtx: Context;
  children: ChildRuns;
  registry: NodeRegistry;
  families: readonly ServiceFamily[];
  /** The run-lease fence of a shared store (issue 19, `NodeContext.runFence`). */
  runFence?: ((t: Db) => Promise<void>) | undefined;
}

/**
 * Runs one node once, in its own span: resolves its inputs, builds its `ctx` with the host's service families
 * bound (RFC 0144), and reports the outcome with the measured duration. Never throws.
 */
export async function executeNode(x: NodeExecution): Promise<Outcome> {
  const { node } = x;
  const { span, traceparent } = startSpan(`openwop.node ${node.typeId}`, x.spanCtx, {
    'openwop.run_id': x.run.runId,
    'openwop.node_id': node.id,
    'openwop.type_id': node.typeId,
  });
  const started = x.clock.now();
  try {
    const inputs = resolveInputs(node.inputs ?? {}, {
      variables: x.variables,
      nodes: x.nodeOutputs,
      inputs: x.run.inputs,
    });
    const ctx = buildNodeContext(x.host, {
      runId: x.run.runId,
      node,
      activation: x.activation,
      inputs,
      variables: { ...x.variables },
      resumed: x.resumed,
      clock: x.clock,
      stop: x.stop,
      halt: x.halt,
      traceparent,
      children: x.children,
      runFence: x.runFence,
      nodeOutputs: x.nodeOutputs,
      configurable: x.run.configurable,
      workflow: x.run.definition,
    });
    const mod = prepareExecution(x.families, ctx, x.registry.get(node.typeId));
    const result = await mod.execute(ctx);
    span.setStatus({ code: SpanStatusCode.OK });
    return {
      ok: true,
      result: {
        ...result,
        // A duration the node already reports (a replay's recorded one) wins over the measured one.
        completedInfo: { durationMs: Math.max(0, x.clock.now() - started), ...result.completedInfo },
      },
    };
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    return { ok: false, error };
  } finally {
    span.end();
  }
}
