import { ErrorCode, HostError, isoAt, unencodablePath } from '../core/index.js';
import type { MhsWireError } from '../core/index.js';
import type { ToolCallResult } from '../mhs/connection.js';
import { checkWire } from '../mhs/validate.js';
import { FINAL_STATUSES } from '../mhs/wire-types.js';
import type { Receipt } from '../mhs/wire-types.js';
import { receiptEntry } from '../ledger/receipt-entry.js';
import type { LedgerEntry } from '../ledger/ledger-types.js';
import type { CallEnv, PendingCommand } from './call-types.js';
import type { EndpointActor } from './endpoint-actor.js';
import type { CommandActor } from './command-actor.js';

/**
 * True when a transport failure happened before anything left the host (HOST-091): a safe retry. Everything
 * else after the intent (post-send timeout, lost reply, a disconnect mid-call, an oversized reply) is ambiguous.
 */
export function isPreSend(e: HostError): boolean {
  if (e.code === ErrorCode.TRANSPORT_TIMEOUT_PRESEND || e.code === ErrorCode.LIMIT_RATE) return true;
  return e.code === ErrorCode.TRANSPORT_DISCONNECTED && e.details.sent === false;
}

/** The MHS error of a fault result (`isError: true`, nothing executed, wire contract §4). */
export function faultError(r: ToolCallResult): HostError {
  const w = (r.structuredContent.error ?? {}) as Partial<MhsWireError>;
  return HostError.fromWire({
    mhs_code: w.mhs_code ?? ErrorCode.HOST_INTERNAL,
    message: w.message ?? 'endpoint fault without an MHS error',
    remediation: w.remediation ?? '',
    ...(w.details ? { details: w.details } : {}),
  });
}

/**
 * Checks a receipt against the wire schema and the command it answers; null when it does not fit, or cannot be
 * recorded (a string JCS cannot encode, issue 16 item 3).
 */
export function receiptFor(sc: Record<string, unknown>, p: PendingCommand): Receipt | null {
  if (unencodablePath(sc) !== null) return null;
  const r = checkWire('receipt', sc);
  if (!r.ok) return null;
  return r.value.command_id === p.commandId && r.value.input_digest === p.inputDigest ? r.value : null;
}

/** Whether a receipt settles its command (completed, rejected, failed). */
export function isFinal(r: Receipt): boolean {
  return FINAL_STATUSES.has(r.status);
}

/** Appends a receipt verbatim in its wrapper with the command's lookup and trace fields (HOST-052, 081). */
export function appendReceipt(
  env: CallEnv,
  p: PendingCommand,
  receipt: Receipt,
  extra: Record<string, unknown> = {},
  deferred = false,
): Promise<LedgerEntry> {
  const entry = receiptEntry(receipt, {
    received_at: isoAt(env.clock.now()),
    ...(p.traceparent ? { traceparent: p.traceparent } : {}),
    ...(p.taskId ? { task_id: p.taskId, parent_action: p.taskId, parent_seq: p.parentSeq } : {}),
    ...(p.runId ? { run_id: p.runId } : {}),
    ...extra,
  });
  return deferred ? env.batcher.defer(entry) : env.ledger.append(entry);
}

/**
 * Feeds a receipt of the call (or of a poll while following it) to the command's machine: a final receipt settles
 * the command and reopens the device gate; `accepted`/`running`/`unknown` keep it shut (HOST-091).
 */
export function applyReceipt(cmd: CommandActor, r: Receipt): 'final' | 'running' | 'unknown' {
  cmd.send({ type: 'reply.receipt', status: r.status, operationId: r.operation_id ?? null });
  return outcomeOf(cmd);
}

/** The call's outcome as the command's machine state says it. */
export function outcomeOf(cmd: CommandActor): 'final' | 'running' | 'unknown' {
  const s = cmd.state;
  if (s.status === 'settled') return 'final';
  return s.status === 'running' ? 'running' : 'unknown';
}

/** Waits `ms` on the injected clock. */
export function pause(env: CallEnv, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const h = env.clock.setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        env.clock.clearTimeout(h);
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * Follows a `running`/`accepted` command through `mhs__operations` until a final receipt or `limitMs`
 * (architecture.md step 6). Returns the last receipt seen; the caller records it.
 */
export async function followOperation(
  env: CallEnv,
  ep: EndpointActor,
  p: PendingCommand,
  first: Receipt,
  opts: { pollMs: number; limitMs: number; signal?: AbortSignal },
): Promise<Receipt> {
  const until = env.clock.now() + opts.limitMs;
  let current = first;
  while (!isFinal(current) && current.status !== 'unknown' && env.clock.now() < until && !opts.signal?.aborted) {
    await pause(env, opts.pollMs, opts.signal);
    const args = current.operation_id ? { operation_id: current.operation_id } : { command_id: p.commandId };
    let r: ToolCallResult;
    try {
      r = await ep.callTool('mhs__operations', args, {
        timeoutMs: Math.max(1_000, opts.pollMs * 4),
        ...(p.traceparent ? { meta: { traceparent: p.traceparent } } : {}),
      });
    } catch {
      continue; // a failed poll changes nothing: the command is still running or unknown
    }
    if (r.isError) continue;
    const next = receiptFor(r.structuredContent, p);
    if (next) current = next;
  }
  return current;
}

/**
 * Records a receipt without holding the caller (HOST-052): the append is queued on the single ledger writer,
 * which commits in order, so it is durable before the next intent of this host is (and before any later command
 * to that device is sent), usually in the same group commit. A crash before it commits leaves the intent
 * unsettled, and recovery reconciles it from the endpoint's retention. If the append fails, the command goes back
 * to `unknown` and its device gate shuts again until reconciliation.
 */
export function recordReceipt(
  env: CallEnv,
  cmd: CommandActor,
  receipt: Receipt,
  extra: Record<string, unknown> = {},
): Promise<LedgerEntry> {
  const done = appendReceipt(env, cmd.p, receipt, extra, true);
  env.inflight.add(done);
  done.then(
    () => env.inflight.delete(done),
    (err: unknown) => {
      env.inflight.delete(done);
      cmd.send({ type: 'record.failed' });
      env.onBackgroundError?.(err as HostError);
    },
  );
  return done;
}
