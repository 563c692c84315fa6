import { ErrorCode, HostError, isoAt } from '../../core/index.js';
import type { Clock } from '../../core/index.js';
import { lazyValidator } from '../../core/lazy-validator.js';
import type { OpenwopHost } from '../../openwop/host.js';
import { DRAIN_POLICIES } from '../../openwop/run-pause.js';
import type { DrainPolicy } from '../../openwop/run-pause.js';
import { bindRunId, runIdFromParam } from '../../openwop/v2/index.js';

const validPause = lazyValidator({
  type: 'object',
  properties: { reason: { type: 'string', maxLength: 1000 }, drainPolicy: { type: 'string' } },
  additionalProperties: false,
});
const validResume = lazyValidator({
  type: 'object',
  properties: { reason: { type: 'string', maxLength: 1000 } },
  additionalProperties: false,
});

function invalid(message: string, field: string, details: Record<string, unknown> = {}): HostError {
  return new HostError(ErrorCode.VALIDATION_ERROR, message, { field, ...details });
}

/**
 * `POST /runs/{runId}:pause` (`{ reason?, drainPolicy? }` → `202 { runId, status: "paused", pausedAt }`) and
 * `POST /runs/{runId}:resume` (`{ reason? }` → `202 { runId, status: "running", resumedAt }`), v2 runs.md §Pause and
 * resume, dispatched by the `/runs/{runId}:{action}` route (fork-route.ts): `run.paused` (echoing `drainPolicy`) and
 * `run.resumed`; a pause of a paused, cancelling or terminal run and a resume of a run not paused are `409`,
 * `run_terminal` when terminal, else `run_state_conflict` with `details.runStatus`. `immediate` cuts the in-flight
 * attempts (run-actor.ts), refused `409 run_state_conflict` naming the node while one is not a pure node; an unknown
 * policy is `400 validation_error` naming the supported ones. The
 * resume answers the transition's status (the snapshot shows `waiting-*` while a drained node's interrupt is
 * pending). Major 1 has no pause operation.
 */
export async function pauseOrResume(
  host: OpenwopHost,
  clock: Clock,
  action: 'pause' | 'resume',
  runIdParam: string,
  rawBody: unknown,
): Promise<Record<string, unknown>> {
  const body = (rawBody ?? {}) as { reason?: string; drainPolicy?: string };
  const runId = runIdFromParam(runIdParam);
  if (action === 'resume') {
    if (!validResume(body)) throw invalid('the resume body is not valid', 'reason');
    await host.runs.resume(runId, body.reason);
    return { runId: bindRunId(runId), status: 'running', resumedAt: isoAt(clock.now()) };
  }
  if (!validPause(body)) throw invalid('the pause body is not valid', 'reason');
  const drainPolicy = body.drainPolicy ?? 'drain-current-node';
  if (!(DRAIN_POLICIES as readonly string[]).includes(drainPolicy))
    throw invalid(`drainPolicy ${drainPolicy} is not served here`, 'drainPolicy', { supported: DRAIN_POLICIES });
  const snap = await host.runs.pause(runId, {
    drainPolicy: drainPolicy as DrainPolicy,
    ...(body.reason ? { reason: body.reason } : {}),
  });
  return { runId: bindRunId(runId), status: snap.status, pausedAt: isoAt(clock.now()) };
}
