/**
 * Run options the engine reads from a run's flat `configurable` map beyond the v1 keys it always read
 * (`recursionLimit`, `model`, `mockProvider`, `escalationThreshold`): the v2 execution bounds and sampling settings
 * (v2 runs.md §"Run options", RFC 0058), set only by a v2 `configurable` (`v2/configurable.ts`) under host-named keys,
 * and the v1 reserved key `runTimeoutMs` (v1 run-options.md, RFC 0058). A v1 run naming the v1 keys `temperature` or
 * `maxTokens` keeps them unread (docs/openwop.md, "v2 configurable").
 */
import { ErrorCode, HostError } from '../core/index.js';
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

/** The v1 reserved `configurable` key of the run's wall-clock deadline (v1 run-options.md §Reserved keys, RFC 0058). */
export const V1_RUN_TIMEOUT_KEY = 'runTimeoutMs';

/** The run's own wall-clock deadline, when set: the v2 `run.runTimeoutMs` or the v1 `configurable.runTimeoutMs`. */
export function runTimeoutOf(
  c: Readonly<Record<string, unknown>> | undefined,
): { ms: number; key: 'run.runTimeoutMs' | 'configurable.runTimeoutMs' } | undefined {
  const v2 = positiveInt(c?.[RUN_OPTION_KEYS.runTimeoutMs]);
  if (v2 !== undefined) return { ms: v2, key: 'run.runTimeoutMs' };
  const v1 = positiveInt(c?.[V1_RUN_TIMEOUT_KEY]);
  return v1 === undefined ? undefined : { ms: v1, key: 'configurable.runTimeoutMs' };
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

/** Which bound set a run's wall-clock deadline (named in its `run_timeout` failure). */
export type RunDeadlineSource =
  'run.runTimeoutMs' | 'configurable.runTimeoutMs' | 'settings.timeout' | 'limits.maxRunDurationMs';

/** A run's wall-clock deadline: milliseconds from its start, and the bound it came from. */
export interface RunDeadline {
  limitMs: number;
  source: RunDeadlineSource;
}

/**
 * The run's wall-clock deadline (RFC 0058; v1 run-options.md `runTimeoutMs`: "min(runTimeoutMs,
 * limits.maxRunDurationMs)"): the smallest of the run's own `runTimeoutMs` (either major), the definition's
 * `settings.timeout` and the host ceiling `maxRunDurationMs`; on a tie the run's own key names it, then the
 * definition's. Undefined when none is set. Read from the stored run, so a restarted host re-arms the same deadline.
 */
export function runDeadlineOf(run: StoredRun, maxRunDurationMs?: number): RunDeadline | undefined {
  const own = runTimeoutOf(run.configurable);
  const t = run.definition.settings?.timeout;
  const timeout = typeof t === 'number' && t > 0 ? t : undefined;
  const candidates: RunDeadline[] = [
    ...(own ? [{ limitMs: own.ms, source: own.key }] : []),
    ...(timeout !== undefined ? [{ limitMs: timeout, source: 'settings.timeout' as const }] : []),
    ...(maxRunDurationMs !== undefined
      ? [{ limitMs: maxRunDurationMs, source: 'limits.maxRunDurationMs' as const }]
      : []),
  ];
  return candidates.reduce<RunDeadline | undefined>((min, c) => (!min || c.limitMs < min.limitMs ? c : min), undefined);
}

/**
 * What the host's model calls accept (the CLI builds it from `serve --model`): the provider a run's calls go to given
 * its `ai.model` / `configurable.model` (undefined: the host model's), and the most `temperature` that provider's API
 * accepts (undefined: no bound known).
 */
export interface RunModelLimits {
  providerOf(runModel: string | undefined): string | undefined;
  maxTemperature(provider: string): number | undefined;
}

/**
 * Refuses, at create, a run whose `ai.temperature` the API its calls go to would refuse at the first model call (the
 * Anthropic Messages API takes 0..1, the v2 schema 0..2). A run on a mock provider asks no provider API.
 * @throws HostError `validation_error` with `details.field` `configurable.ai.temperature`, `provider`, `maximum` and
 * `value`.
 */
export function checkRunSampling(c: Readonly<Record<string, unknown>> | undefined, limits: RunModelLimits): void {
  const t = c?.[RUN_OPTION_KEYS.temperature];
  if (!c || typeof t !== 'number' || c.mockProvider !== undefined) return;
  const provider = limits.providerOf(typeof c.model === 'string' ? c.model : undefined);
  const maximum = provider === undefined ? undefined : limits.maxTemperature(provider);
  if (maximum === undefined || t <= maximum) return;
  const field = 'configurable.ai.temperature';
  throw new HostError(
    ErrorCode.VALIDATION_ERROR,
    `${field} ${t} is above ${maximum}, the most the ${provider} API accepts; give a value from 0 to ${maximum}`,
    { field, provider, maximum, value: t },
  );
}
