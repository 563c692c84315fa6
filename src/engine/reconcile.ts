import { ErrorCode, HostError, isoAt, toHostError } from '../core/index.js';
import type { Receipt } from '../mhs/wire-types.js';
import { appendReceipt, followOperation, isFinal, receiptFor } from './call-outcome.js';
import { commandOf } from './command-actor.js';
import type { CommandActor } from './command-actor.js';
import type { CallEnv, PendingCommand } from './call-types.js';
import type { EndpointActor } from './endpoint-actor.js';

/** How a reconciliation ended (HOST-091). */
export interface ReconcileResult {
  commandId: string;
  endpointId: string;
  deviceId: string;
  /**
   * `receipt`: the endpoint's retained receipt settled it (final); `not_executed`: the endpoint has no record
   * of it, nothing ran; `running`/`unknown`: still unsettled, the gate stays shut.
   */
  outcome: 'receipt' | 'not_executed' | 'running' | 'unknown';
  /** `operations`: found by `mhs__operations`; `retry`: confirmed by a same-id retry answered `replayed: true`. */
  method: 'operations' | 'retry' | null;
  receipt: Receipt | null;
  /**
   * Set when the endpoint had no record of the command before its deadline (plus the transport margin) had
   * passed: it may still execute it, so the outcome stays `unknown` and it is reconciled again at this time.
   */
  retryAt?: number;
}

const RECONCILE_SCOPE = 'reconcile';

/** Reconciliations in progress per engine env: one per command at a time (a re-armed timer and a caller may meet). */
const running = new WeakMap<CallEnv, Map<string, Promise<ReconcileResult>>>();

/**
 * Reconciles one unsettled command (HOST-091): asks `mhs__operations {command_id}` (a read; nothing executes).
 * No record at the endpoint after the command's deadline plus the transport margin has passed since its send (or
 * an upper bound of it) → `not_executed`; no record before that → still `unknown` (the endpoint may yet execute it, issue 16), recorded,
 * and reconciled again at `retryAt` through `env.scheduleReconcile`. A final receipt → confirmed with a same-id retry on a fresh
 * session, which the endpoint answers from retention with `replayed: true` and never executes again; when the
 * journaled input was redacted the operations receipt is used as is. `running` is followed. Every outcome is
 * appended as a `reconcile` entry; a settled one reopens the device gate.
 * Fails with transport codes when the endpoint cannot be asked, and with the deployment policy's refusal
 * (HOST-090); the gate stays shut either way.
 */
export function reconcileCommand(env: CallEnv, ep: EndpointActor, p: PendingCommand): Promise<ReconcileResult> {
  let mine = running.get(env);
  if (!mine) running.set(env, (mine = new Map()));
  const busy = mine.get(p.commandId);
  if (busy) return busy;
  const table = mine;
  const r = reconcileOnce(env, ep, p).finally(() => table.delete(p.commandId));
  table.set(p.commandId, r);
  return r;
}

async function reconcileOnce(env: CallEnv, ep: EndpointActor, p: PendingCommand): Promise<ReconcileResult> {
  const base = { commandId: p.commandId, endpointId: p.endpointId, deviceId: p.deviceId };
  // HOST-090: operations on (and same-id retries to) a device the deployment refuses are not sent; the gate stays shut.
  await ep.admit('operations', p.deviceId, { command_id: p.commandId });
  const cmd = commandOf(env, p, ep);
  // The machine takes the reconciliation from `unknown` or `running`; one still in flight is its call's to settle.
  cmd.send({ type: 'reconcile', at: env.clock.now() });
  if (cmd.state.status !== 'reconciling')
    return { ...base, outcome: p.reason === 'running' ? 'running' : 'unknown', method: null, receipt: null };
  try {
    return await askEndpoint(env, ep, cmd);
  } catch (err) {
    if (cmd.state.status === 'reconciling') cmd.send({ type: 'reconcile.failed', code: toHostError(err).code });
    throw err;
  }
}

async function askEndpoint(env: CallEnv, ep: EndpointActor, cmd: CommandActor): Promise<ReconcileResult> {
  const p = cmd.p;
  const base = { commandId: p.commandId, endpointId: p.endpointId, deviceId: p.deviceId };
  const meta = p.traceparent ? { meta: { traceparent: p.traceparent } } : {};
  const ops = await ep.callTool('mhs__operations', { command_id: p.commandId }, { timeoutMs: 10_000, ...meta });
  let receipt: Receipt | null = null;
  let method: ReconcileResult['method'] = 'operations';
  if (ops.isError) {
    const err = (ops.structuredContent.error ?? {}) as { mhs_code?: string; details?: Record<string, unknown> };
    // Wire contract §4: an unknown command is a schema fault; nothing executed under this command_id.
    if (err.mhs_code !== ErrorCode.SCHEMA_INVALID_INPUT)
      throw new HostError(
        (err.mhs_code as ErrorCode | undefined) ?? ErrorCode.HOST_INTERNAL,
        `cannot reconcile ${p.commandId}: the endpoint refused mhs__operations`,
        { command_id: p.commandId, error: ops.structuredContent.error },
      );
    // Issue 16: a conforming endpoint may execute up to the deadline; the machine concludes only after it.
    const fx = cmd.send({ type: 'reconcile.no_record', at: env.clock.now() });
    const rec = fx.find((f) => f.type === 'recordReconcile');
    if (rec?.outcome !== 'not_executed') return notYet(env, p, rec?.notBefore ?? env.clock.now());
    await env.ledger.append({
      kind: 'reconcile',
      command_id: p.commandId,
      endpoint_id: p.endpointId,
      device_id: p.deviceId,
      outcome: 'not_executed',
      method: 'operations',
      ...(p.traceparent ? { traceparent: p.traceparent } : {}),
    });
    return { ...base, outcome: 'not_executed', method: 'operations', receipt: null };
  }
  receipt = receiptFor(ops.structuredContent, p);
  if (!receipt)
    throw new HostError(ErrorCode.HOST_INTERNAL, `mhs__operations answered ${p.commandId} with another command`, {
      command_id: p.commandId,
    });
  if (!isFinal(receipt) && receipt.status !== 'unknown') {
    receipt = await followOperation(env, ep, p, receipt, { pollMs: 50, limitMs: env.followLimitMs ?? 30_000 });
  }
  if (isFinal(receipt) && p.input && !JSON.stringify(p.input).includes('[REDACTED]')) {
    const replayed = await sameIdRetry(ep, p).catch(() => null);
    if (replayed?.replayed) {
      receipt = replayed;
      method = 'retry';
    }
  }
  const entry = await appendReceipt(env, p, receipt, { reconciled: true });
  const fx = cmd.send({
    type: 'reconcile.receipt',
    status: receipt.status,
    operationId: receipt.operation_id ?? null,
    at: env.clock.now(),
  });
  const outcome = fx.find((f) => f.type === 'recordReconcile')?.outcome ?? 'unknown';
  await env.ledger.append({
    kind: 'reconcile',
    command_id: p.commandId,
    endpoint_id: p.endpointId,
    device_id: p.deviceId,
    outcome,
    method,
    status: receipt.status,
    replayed: receipt.replayed,
    receipt_seq: entry.seq,
    ...(p.traceparent ? { traceparent: p.traceparent } : {}),
  });
  return { ...base, outcome, method, receipt };
}

/**
 * No record yet, deadline not passed: the machine kept the command unknown with its gate shut and re-armed its
 * reconciliation at `settleAt`; the wait is recorded (a `reconcile` entry with outcome `unknown` and `not_before`).
 */
async function notYet(env: CallEnv, p: PendingCommand, settleAt: number): Promise<ReconcileResult> {
  await env.ledger.append({
    kind: 'reconcile',
    command_id: p.commandId,
    endpoint_id: p.endpointId,
    device_id: p.deviceId,
    outcome: 'unknown',
    method: 'operations',
    reason: 'no_record_before_deadline',
    not_before: isoAt(settleAt),
    ...(p.traceparent ? { traceparent: p.traceparent } : {}),
  });
  return {
    commandId: p.commandId,
    endpointId: p.endpointId,
    deviceId: p.deviceId,
    outcome: 'unknown',
    method: 'operations',
    receipt: null,
    retryAt: settleAt,
  };
}

/** The same command again, same `command_id` and input, on a fresh session: answered from retention. */
async function sameIdRetry(ep: EndpointActor, p: PendingCommand): Promise<Receipt | null> {
  const lease = await ep.acquireSession(RECONCILE_SCOPE, p.deviceId, [p.capabilityId]);
  try {
    const r = await ep.callTool(
      p.tool,
      { ...p.input, _mhs: { session_id: lease.sessionId, command_id: p.commandId, deadline_ms: p.deadlineMs } },
      { timeoutMs: p.deadlineMs + 5_000, ...(p.traceparent ? { meta: { traceparent: p.traceparent } } : {}) },
    );
    return r.isError ? null : receiptFor(r.structuredContent, p);
  } finally {
    lease.release();
    await ep.closeSessionScope(RECONCILE_SCOPE).catch(() => undefined);
  }
}

/** Reconciles every pending command of `ep` (optionally one device); failures stay pending and are reported. */
export async function reconcileEndpoint(
  env: CallEnv,
  ep: EndpointActor,
  deviceId?: string,
): Promise<Array<ReconcileResult | { commandId: string; error: HostError }>> {
  const todo = [...env.pending.values()].filter(
    (p) =>
      p.endpointId === ep.endpointId && (deviceId === undefined || p.deviceId === deviceId) && p.reason !== 'in_flight',
  );
  const out: Array<ReconcileResult | { commandId: string; error: HostError }> = [];
  for (const p of todo) {
    try {
      out.push(await reconcileCommand(env, ep, p));
    } catch (err) {
      out.push({ commandId: p.commandId, error: toHostError(err) });
    }
  }
  return out;
}
