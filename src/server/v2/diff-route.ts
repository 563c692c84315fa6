import { ErrorCode, HostError } from '../../core/index.js';
import type { OpenwopHost } from '../../openwop/host.js';
import { TERMINAL_STATUSES } from '../../openwop/types.js';
import { bindRunId, diffRuns, projectEvent, runIdFromParam } from '../../openwop/v2/index.js';
import type { DiffSide, RunDiff } from '../../openwop/v2/index.js';
import { runOwner } from './run-owner.js';

async function side(host: OpenwopHost, runId: string): Promise<DiffSide> {
  const run = await host.store.getRun(runId);
  if (!run) throw new HostError(ErrorCode.NOT_FOUND, 'run not found', { runId: bindRunId(runId) });
  const owner = await runOwner(host, run);
  const events = (await host.store.events(runId)).map((e) => projectEvent(e, owner));
  return {
    runId: bindRunId(runId),
    events,
    // Redaction-safe: the run's status, variables and error, never credential material.
    state: { status: run.status, variables: run.variables, error: run.error },
    terminal: TERMINAL_STATUSES.has(run.status),
  };
}

/**
 * `GET /runs/{runId}:diff?against=` (v2 runs.md §Diff and ancestry, RFC 0054): the diff of the two runs' v2 logs.
 * `against` is a v2 run id (bound, or percent-decoded); missing, it is `400 validation_error`; either run unknown is
 * `404 not_found`, another tenant's `403 id_tenant_mismatch`.
 */
export async function v2RunDiff(host: OpenwopHost, runParam: string, against: unknown): Promise<RunDiff> {
  if (typeof against !== 'string' || against === '')
    throw new HostError(ErrorCode.VALIDATION_ERROR, 'against names the run to diff with', { field: 'against' });
  const [a, b] = [runIdFromParam(runParam), runIdFromParam(against)];
  return diffRuns(await side(host, a), await side(host, b));
}
