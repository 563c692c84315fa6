import { NodeFailure } from '../node-registry.js';
import type { NodeModule } from '../node-registry.js';

/** `core.noop`: completes with no outputs. */
export const noopNode: NodeModule = {
  typeId: 'core.noop',
  pure: true,
  execute: () => Promise.resolve({ outputs: {} }),
};

/** `core.identity`: outputs its resolved inputs unchanged. */
export const identityNode: NodeModule = {
  typeId: 'core.identity',
  pure: true,
  execute: (ctx) => Promise.resolve({ outputs: { ...ctx.inputs } }),
};

/** `core.fail`: fails with `config.code` / `config.message` (default `node_failed`). */
export const failNode: NodeModule = {
  typeId: 'core.fail',
  pure: true,
  execute: (ctx) => {
    const code =
      typeof ctx.node.config.code === 'string' && ctx.node.config.code ? ctx.node.config.code : 'node_failed';
    const message =
      typeof ctx.node.config.message === 'string' && ctx.node.config.message
        ? ctx.node.config.message
        : 'core.fail node';
    return Promise.reject(new NodeFailure(code, message));
  },
};

function delayMs(config: Record<string, unknown>): number | undefined {
  const v = config.durationMs ?? config.delayMs ?? config.ms;
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}

/**
 * `core.delay`: waits `config.durationMs` (or the `delayMs` / `durationMs` input, as the conformance fixtures wire it)
 * of clock time; the due time survives a restart.
 */
export const delayNode: NodeModule = {
  typeId: 'core.delay',
  pure: true,
  validate: (node) =>
    delayMs(node.config) === undefined && !node.inputs.delayMs && !node.inputs.durationMs
      ? [{ path: '/config/durationMs', message: 'must be a number >= 0' }]
      : [],
  async execute(ctx) {
    const ms = delayMs(ctx.node.config) ?? delayMs(ctx.inputs) ?? 0;
    await ctx.sleep(ms);
    return { outputs: { delayedMs: ms } };
  },
};
