import { NodeFailure } from '../node-registry.js';
import type { NodeModule, NodeResult, NodeContext } from '../node-registry.js';

function mapping(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

/**
 * Starts a child run of `config.workflowId` recording `parentRunId`/`parentNodeId` (RFC 0007).
 * `inputMapping {childVar: parentVar}` seeds the child's variables once, at dispatch (RFC 0022 §B);
 * with `waitForCompletion` (default true) the node waits for the child and, when it completed,
 * copies `outputMapping {parentVar: childVar}` back. A failed or cancelled child fails the node
 * (`onChildFailure: fail-parent`, the default) or completes it with the child's status (`continue`).
 * The child is found again by a deterministic key after a restart, never started twice.
 */
async function runSubWorkflow(ctx: NodeContext): Promise<NodeResult> {
  const c = ctx.node.config;
  const workflowId = c.workflowId as string;
  const seed: Record<string, unknown> = {};
  for (const [childVar, parentVar] of Object.entries(mapping(c.inputMapping)))
    seed[childVar] = ctx.variables[parentVar];
  const { runId: childRunId } = await ctx.children.start({
    workflowId,
    variables: seed,
    parentRunId: ctx.runId,
    parentNodeId: ctx.node.id,
    key: `${ctx.runId}:${ctx.node.id}:${ctx.activation}`,
  });
  if (
    !ctx.history.some((e) => e.type === 'log.appended' && (e.payload.fields as { childRunId?: string })?.childRunId)
  ) {
    await ctx.emit([
      {
        type: 'log.appended',
        payload: {
          level: 'info',
          message: 'child run started',
          nodeId: ctx.node.id,
          fields: { childRunId, workflowId },
        },
      },
    ]);
  }
  if (c.waitForCompletion === false) return { outputs: { childRunId } };
  const child = await ctx.children.settled(childRunId);
  if (child.status !== 'completed') {
    if (c.onChildFailure === 'continue') return { outputs: { childRunId, childStatus: child.status } };
    throw new NodeFailure('child_run_failed', `child run ${childRunId} ended ${child.status}`, {
      childRunId,
      childStatus: child.status,
      ...(child.error ? { childError: child.error } : {}),
    });
  }
  const variables: Record<string, unknown> = {};
  for (const [parentVar, childVar] of Object.entries(mapping(c.outputMapping))) {
    variables[parentVar] = child.variables[childVar];
  }
  return { outputs: { childRunId, childStatus: 'completed' }, variables };
}

function validate(node: { config: Record<string, unknown> }): Array<{ path: string; message: string }> {
  return typeof node.config.workflowId === 'string' && node.config.workflowId
    ? []
    : [{ path: '/config/workflowId', message: 'must name the child workflow' }];
}

/** `core.subWorkflow`. */
export const subWorkflowNode: NodeModule = { typeId: 'core.subWorkflow', validate, execute: runSubWorkflow };
/** `core.control.subWorkflow` (the same contract under the control namespace). */
export const controlSubWorkflowNode: NodeModule = {
  typeId: 'core.control.subWorkflow',
  validate,
  execute: runSubWorkflow,
};
