import { randomBytes } from 'node:crypto';
import { ErrorCode, isoAt } from '../../core/index.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeContext, NodeModule } from '../node-registry.js';
import { NONDETERMINISM_SOURCES } from '../replay.js';

/**
 * The host's counted effect seam for the conformance replay nodes (host-sample-test-seams.md §20): counts the effects
 * attempted per run, and refuses (default-deny, replay.md §Suppression rule 6b) any attempt made from a replay fork,
 * before counting, with `replay_source_missing`. The count lives in `counts` (pass one map to keep it across a reopen).
 */
export class EffectSeam {
  constructor(
    private readonly isReplay: (runId: string) => Promise<boolean>,
    private readonly counts: Map<string, number> = new Map(),
  ) {}

  /** Performs one effect for `ctx`'s run; its count afterwards. */
  async fire(ctx: NodeContext): Promise<number> {
    if (await this.isReplay(ctx.runId)) {
      throw new NodeFailure(ErrorCode.REPLAY_SOURCE_MISSING, 'an effect was reached during a replay and refused', {
        nodeId: ctx.node.id,
      });
    }
    const n = (this.counts.get(ctx.runId) ?? 0) + 1;
    this.counts.set(ctx.runId, n);
    return n;
  }

  /** Effects attempted by `runId` (0 when none). */
  count(runId: string): number {
    return this.counts.get(runId) ?? 0;
  }
}

function effectNode(typeId: string, seam: EffectSeam): NodeModule {
  return {
    typeId,
    async execute(ctx) {
      const effectCount = await seam.fire(ctx);
      return { outputs: { emitted: true, effectCount } };
    },
  };
}

function holdMs(ctx: NodeContext): number {
  const v = ctx.inputs.delayMs ?? ctx.node.config.delayMs;
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0;
}

/** `core.conformance.hold`: a pure wait of `delayMs` (input or config) that re-executes live in a replay. */
export const holdNode: NodeModule = {
  typeId: 'core.conformance.hold',
  pure: true,
  async execute(ctx) {
    const ms = holdMs(ctx);
    await ctx.sleep(ms);
    return { outputs: { heldMs: ms } };
  },
};

/**
 * `core.conformance.nondeterminism` (RFC 0237 fixture): draws one value per source in {@link NONDETERMINISM_SOURCES}
 * through `ctx.checkpoint`, so a replay fork reproduces each while a branch draws afresh.
 */
export const nondeterminismNode: NodeModule = {
  typeId: 'core.conformance.nondeterminism',
  pure: true,
  async execute(ctx) {
    const draw: Record<(typeof NONDETERMINISM_SOURCES)[number], () => string> = {
      clock: () => isoAt(ctx.clock.now()),
      random: () => randomBytes(16).toString('hex'),
      id: () => `nd_${randomBytes(12).toString('hex')}`,
    };
    const outputs: Record<string, unknown> = {};
    for (const s of NONDETERMINISM_SOURCES) outputs[s] = await ctx.checkpoint(`nondeterminism:${s}`, draw[s]);
    return { outputs };
  },
};

/**
 * The conformance replay nodes over `seam`: `conformance.effect.emit` and `core.conformance.side-effect` (both
 * side-effecting: one counted effect each), `core.conformance.hold` and `core.conformance.nondeterminism` (pure).
 */
export function conformanceReplayNodes(seam: EffectSeam): NodeModule[] {
  return [
    effectNode('conformance.effect.emit', seam),
    effectNode('core.conformance.side-effect', seam),
    holdNode,
    nondeterminismNode,
  ];
}
