import type { NodeContext } from '../node-registry.js';

/**
 * The value recorded by `ctx.checkpoint(name, ...)` in this node execution's history (a `log.appended` event with
 * `fields.checkpoint === name`), so async work (a model call) can be skipped on resume before it is redone.
 */
export function recallCheckpoint(ctx: NodeContext, name: string): { found: boolean; value: unknown } {
  for (const e of ctx.history) {
    const f = e.payload.fields as { checkpoint?: string; value?: unknown } | undefined;
    if (e.type === 'log.appended' && f?.checkpoint === name) return { found: true, value: f.value };
  }
  return { found: false, value: undefined };
}
