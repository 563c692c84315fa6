import type { NodeContext } from '../node-registry.js';
import type { RunEvent, RunEventInput } from '../types.js';

/**
 * Appends `input` unless this activation of the node already recorded a matching event (a node resumed after a
 * restart replays its script against its history), and returns the recorded event either way. This is what makes
 * the agent and orchestrator emissions replay-deterministic: an event is written once, never twice.
 */
export async function emitOnce(
  ctx: NodeContext,
  input: RunEventInput,
  match: (e: RunEvent) => boolean = () => true,
): Promise<RunEvent> {
  const prior = ctx.history.find((e) => e.type === input.type && match(e));
  if (prior) return prior;
  const [e] = await ctx.emit([input]);
  return e!;
}

/** The events of this activation of the node, of one type, in log order. */
export function recorded(ctx: NodeContext, type: string): RunEvent[] {
  return ctx.history.filter((e) => e.type === type);
}
