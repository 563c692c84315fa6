/**
 * Run options the engine reads from a run's flat `configurable` map beyond the v1 keys it always read
 * (`recursionLimit`, `model`, `mockProvider`, `escalationThreshold`): the v2 execution bounds and sampling settings
 * (v2 runs.md §"Run options", RFC 0058). They are set only by a v2 `configurable` (`v2/configurable.ts`), under
 * host-named keys, so a v1 run naming the v1 keys `runTimeoutMs`, `temperature` or `maxTokens` keeps them unread as
 * before (docs/openwop.md, "v2 configurable").
 */
import type { StoredRun } from './store.js';

/** The engine key of each v2 `configurable` key honoured here (section-qualified in the v2 object). */
export const RUN_OPTION_KEYS = {
  runTimeoutMs: 'openwop.v2.runTimeoutMs',
  maxLoopIterations: 'openwop.v2.maxLoopIterations',
  temperature: 'openwop.v2.temperature',
  maxTokens: 'openwop.v2.maxTokens',
} as const;

function positiveInt(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined;
}

/** `run.runTimeoutMs` of a run, when set. */
export function runTimeoutOf(c: Readonly<Record<string, unknown>> | undefined): number | undefined {
  return positiveInt(c?.[RUN_OPTION_KEYS.runTimeoutMs]);
}

/** `run.maxLoopIterations` of a run (RFC 0058: the ceiling on orchestrator turns), when set. */
export function loopLimitOf(c: Readonly<Record<string, unknown>> | undefined): number | undefined {
  return positiveInt(c?.[RUN_OPTION_KEYS.maxLoopIterations]);
}

/**
 * What a child run (subworkflow, dispatch) inherits of its parent's options beside the mock: the run-wide sampling
 * settings, so a run asked for `temperature: 0` stays at 0 in the sub-agents it starts. The execution bounds are not
 * inherited: the parent's own `runTimeoutMs` and loop ceiling already bound the work it waits for.
 */
export function inheritedSampling(c: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of [RUN_OPTION_KEYS.temperature, RUN_OPTION_KEYS.maxTokens])
    if (c[key] !== undefined) out[key] = c[key];
  return out;
}

/** Sampling settings of one model call: what goes on the provider request. */
export interface Sampling {
  temperature?: number;
  maxTokens?: number;
}

/**
 * The sampling of one model call of a run: `ai.temperature` as set, and as output budget the smaller of the call's own
 * (`callMaxTokens`, e.g. an envelope's) and the run's `ai.maxTokens` (a ceiling: a run never widens a call's budget).
 */
export function samplingOf(c: Readonly<Record<string, unknown>> | undefined, callMaxTokens?: number): Sampling {
  const t = c?.[RUN_OPTION_KEYS.temperature];
  const budgets = [callMaxTokens, positiveInt(c?.[RUN_OPTION_KEYS.maxTokens])].filter(
    (n): n is number => typeof n === 'number',
  );
  return {
    ...(typeof t === 'number' && t >= 0 && t <= 2 ? { temperature: t } : {}),
    ...(budgets.length ? { maxTokens: Math.min(...budgets) } : {}),
  };
}

/**
 * The run as its actor reads it: under `run.runTimeoutMs`, the definition's `settings.timeout` (the wall-clock
 * ceiling the actor arms, breaching with `cap.breached {kind: 'run-duration'}` and `run_timeout`) becomes the smaller
 * of the two. The stored run is not changed; a restarted host resolves the same ceiling from the same options.
 */
export function withRunTimeout(run: StoredRun): StoredRun {
  const requested = runTimeoutOf(run.configurable);
  if (requested === undefined) return run;
  const own = run.definition.settings?.timeout;
  const timeout = typeof own === 'number' && own > 0 ? Math.min(own, requested) : requested;
  return { ...run, definition: { ...run.definition, settings: { ...run.definition.settings, timeout } } };
}
