import { SpanKind } from '@opentelemetry/api';
import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { MhsWireError } from '../core/index.js';
import type { Db } from '../ledger/db.js';
import type { LedgerAppend } from '../ledger/ledger-types.js';
import type { ToolCallResult } from '../mhs/connection.js';
import type { ControlFields } from '../mhs/wire-types.js';
import type { GovernedCallContext } from '../policy/call-gate.js';
import { initialCommand } from '../../machines/governed-command.js';
import { applyReceipt, faultError, followOperation, isPreSend, receiptFor, recordReceipt } from './call-outcome.js';
import { CommandActor } from './command-actor.js';
import type { CallEnv, InvokeRequest, InvokeResult, PendingCommand } from './call-types.js';
import type { EndpointActor } from './endpoint-actor.js';
import { protocolFaultEntry, unencodableReply } from './protocol-fault.js';
import { ADHOC_SCOPE } from './session-pool.js';
import type { SessionLease } from './session-pool.js';
import { compositionChildren, resolveTarget, type CallTarget } from './call-target.js';

export { stripControl } from './call-target.js';

/**
 * The governed call (architecture.md steps 1-7; HOST-020, 031, 033, 037, 070, 091): the only path from a caller
 * to a device. Validates locally, fills `_mhs`, asks the {@link CallGate}, journals `command.intent` durably with
 * a host-allocated `command_id`, sends through the endpoint's lane with `deadline_ms` below the transport
 * timeout, records the receipt verbatim and returns it in full.
 *
 * Fails with: `MHS.SCHEMA.INVALID_INPUT` (local validation, unknown device/capability), `MHS.AUTH.DISABLED` /
 * `MHS.AUTH.HARDWARE_DISABLED` (deployment policy, HOST-090: no session, no intent),
 * `MHS.HOST.DEVICE_GATE_CLOSED` (an unsettled command on that device), the gate's deny code,
 * `MHS.HOST.LEDGER_UNAVAILABLE` (intent not durable: nothing sent), pre-send transport codes and
 * `MHS.LIMIT.RATE` (recorded `command.not_sent`, retryable), endpoint fault codes (`MHS.SESSION.*`, ...:
 * nothing executed), and `MHS.OUTCOME.UNKNOWN` with `details.command_id` when the request left the host and no
 * answer came back (the gate stays shut until {@link reconcile}).
 */
export async function governedCall(env: CallEnv, ep: EndpointActor, req: InvokeRequest): Promise<InvokeResult> {
  // 1. Local validation against the binding's schema (compiled once per manifest digest); a composition
  // (experimental, HOST-084) is refused here when the host or the endpoint does not enable it.
  const target = resolveTarget(env, ep, req);
  const { device, binding, inputDigest } = target;
  // HOST-090: the deployment policy refuses before a session is opened or an intent journaled.
  await ep.admit('capability', device.device_id, {
    capability_id: binding.capability_id,
    input_digest: inputDigest,
    ...(req.runId ? { run_id: req.runId } : {}),
    ...(req.nodeId ? { node_id: req.nodeId } : {}),
    ...(req.taskId ? { task_id: req.taskId } : {}),
  });
  const effectful = binding.effect !== 'read';
  if (effectful) ep.assertGateOpen(device.device_id);

  // 2-3. Policy and approval on an open, least-privilege session.
  const scope = req.taskId ?? ADHOC_SCOPE;
  // HOST-003: the session is disclosed on the caller's surface (and in the ledger) before its first call.
  const disclosure = await env.disclosures?.before(ep, device.device_id, {
    scope: req.taskId ?? (req.runId ? `run:${req.runId}` : ADHOC_SCOPE),
    ...(req.principal ? { principal: req.principal } : {}),
    ...(req.runId ? { runId: req.runId } : {}),
    ...(req.nodeId ? { nodeId: req.nodeId } : {}),
    ...(req.disclosure ? { request: req.disclosure } : {}),
  });
  const lease = await ep.acquireSession(scope, device.device_id, target.sessionCapabilities);
  // Issue 16: the lease is held for the whole call (approval wait included), so its session never idles out under it.
  try {
    const res = await callOnLease(env, ep, req, { ...target, effectful, lease });
    return disclosure ? { ...res, disclosure } : res;
  } finally {
    lease.release();
  }
}

/** What {@link governedCall} settled before holding its session lease. */
interface LeasedCall extends CallTarget {
  effectful: boolean;
  lease: SessionLease;
}

/** Steps 2-7 of {@link governedCall}, on a held session lease. */
async function callOnLease(env: CallEnv, ep: EndpointActor, req: InvokeRequest, c: LeasedCall): Promise<InvokeResult> {
  const { device, binding, input, inputDigest, effectful, lease } = c;
  const trace = env.tracer.start(`mhs.command ${binding.capability_id}`, req.trace, {
    'mhs.endpoint_id': ep.endpointId,
    'mhs.device_id': device.device_id,
  });
  // HOST-081: commands of a task carry the task span's traceparent itself, so the whole task is one trace.
  const traceparent = req.trace && 'span' in req.trace ? req.trace.traceparent : trace.traceparent;
  const tracestate = req.trace && 'span' in req.trace ? req.trace.tracestate : trace.tracestate;
  const ctx: GovernedCallContext = {
    endpointId: ep.endpointId,
    connectorId: ep.connectorId,
    connectorEnabled: await env.isEnabled(ep.connectorId, ep.endpointId),
    conformanceLevel: ep.manifest.conformance?.level ?? null,
    device,
    binding,
    input,
    inputDigest,
    session: { sessionId: lease.sessionId, state: lease.state, expiresAt: lease.expiresAt },
    traceparent,
    ...(req.resource !== undefined ? { resource: req.resource } : {}),
    ...(req.expectedRevision !== undefined ? { expectedRevision: req.expectedRevision } : {}),
    ...(req.taskId ? { taskId: req.taskId } : {}),
    ...(req.runId ? { runId: req.runId } : {}),
    ...(req.nodeId ? { nodeId: req.nodeId } : {}),
    ...(req.approvalKey ? { approvalKey: req.approvalKey } : {}),
    ...(req.principal ? { requestedBy: req.principal } : {}),
    ...(effectful ? { assertSendable: () => ep.assertGateOpen(device.device_id) } : {}),
  };
  const waitSignal = req.approvalSignal && req.signal ? AbortSignal.any([req.signal, req.approvalSignal]) : undefined;
  const decision = await env.gate.authorize(ctx, waitSignal ?? req.approvalSignal ?? req.signal);
  if (decision.kind === 'deny') {
    env.tracer.end(trace, decision.code);
    throw new HostError(decision.code, decision.message, {
      endpoint_id: ep.endpointId,
      device_id: device.device_id,
      capability_id: binding.capability_id,
      input_digest: inputDigest,
      ...decision.details,
    });
  }
  const permitId = decision.permitId;
  // Issue 16: an approved call refused before its intent is durable revokes its permit and records why.
  const notSent = async (e: HostError): Promise<HostError> => {
    await decision.notExecuted?.(e).catch((err: unknown) => env.onBackgroundError?.(toHostError(err)));
    env.tracer.end(trace, e.code);
    return e;
  };
  if (permitId && (env.usedPermits.has(permitId) || (await env.permitSent?.(permitId)))) {
    env.tracer.end(trace, ErrorCode.AUTH_PERMIT_CONSUMED);
    throw new HostError(ErrorCode.AUTH_PERMIT_CONSUMED, `permit ${permitId} was already sent once (HOST-070)`, {
      permit_id: permitId,
    });
  }

  // 4. Journal the intent durably with a host-allocated command_id and shut the device gate.
  const commandId = env.ids.next('command');
  const deadlineMs = Math.max(
    1,
    Math.min(req.deadlineMs ?? binding.max_duration_ms, ep.manifest.limits.max_deadline_ms),
  );
  const p: PendingCommand = {
    commandId,
    endpointId: ep.endpointId,
    deviceId: device.device_id,
    capabilityId: binding.capability_id,
    tool: c.tool,
    sessionId: lease.sessionId,
    inputDigest,
    input,
    deadlineMs,
    effectful,
    operationId: null,
    traceparent,
    taskId: req.parentAction?.taskId ?? req.taskId ?? null,
    parentSeq: req.parentAction?.seq ?? null,
    ...(req.runId ? { runId: req.runId } : {}),
    reason: 'in_flight',
  };
  // The command's one owner (issue 16): the gate, the pending map and the permit follow its machine state.
  const cmd = new CommandActor(
    env,
    p,
    initialCommand({ deviceId: device.device_id, effectful, deadlineMs, marginMs: env.transportMarginMs }),
    ep,
  );
  cmd.send({ type: 'authorise', permitId: permitId ?? null });
  try {
    if (effectful) ep.assertGateOpen(device.device_id); // in the same tick as the gate shuts
    cmd.send({ type: 'journal', commandId, at: env.clock.now() });
  } catch (err) {
    const e = toHostError(err);
    cmd.send({ type: 'refuse', code: e.code });
    throw await notSent(e);
  }
  let intentSeq: number;
  try {
    intentSeq = (
      await env.batcher.append(
        {
          kind: 'command.intent',
          command_id: commandId,
          endpoint_id: ep.endpointId,
          connector_id: ep.connectorId,
          device_id: device.device_id,
          capability_id: binding.capability_id,
          tool: p.tool,
          session_id: lease.sessionId,
          input_digest: inputDigest,
          input,
          effect: binding.effect,
          risk_class: binding.risk_class,
          deadline_ms: deadlineMs,
          traceparent,
          ...(req.principal ? { principal: req.principal } : {}),
          ...(permitId ? { permit_id: permitId } : {}),
          ...(decision.approval ? { approval_id: decision.approval.approval_id } : {}),
          ...(p.taskId ? { task_id: p.taskId, parent_action: p.taskId, parent_seq: p.parentSeq } : {}),
          ...(req.parentAction?.step !== undefined ? { task_step: req.parentAction.step } : {}),
          ...(req.runId ? { run_id: req.runId } : {}),
          ...(req.nodeId ? { node_id: req.nodeId } : {}),
          ...(req.expectedRevision !== undefined ? { expected_revision: req.expectedRevision } : {}),
          ...(req.resource !== undefined ? { resource: req.resource } : {}),
          ...(c.composition
            ? { composition_digest: c.composition.digest, composition_steps: c.composition.steps, experimental: true }
            : {}),
        },
        { claimGates: true, ...fenceOf(ep, req, commandId) },
      )
    ).seq;
  } catch (err) {
    // Nothing was sent: the intent is not durable (HOST-093), or another host process holds the device's gate
    // in the store (HOST-091); either way there is no command.
    const e = toHostError(err, ErrorCode.HOST_LEDGER_UNAVAILABLE);
    cmd.send({ type: 'journal.failed', code: e.code });
    throw await notSent(e);
  }
  cmd.send({ type: 'journal.done' });

  // 5. Send through the lane, deadline_ms below the transport timeout (HOST-037).
  const control: ControlFields = { session_id: lease.sessionId, command_id: commandId, deadline_ms: deadlineMs };
  if (permitId) control.permit_id = permitId;
  if (req.expectedRevision !== undefined) control.expected_revision = req.expectedRevision;
  if (req.resource !== undefined) control.resource = req.resource;
  const timeoutMs = deadlineMs + env.transportMarginMs;
  const meta: Record<string, string> = { traceparent };
  if (tracestate) meta.tracestate = tracestate;
  // The MCP call as the client sees it, from leaving the lane to the answer (OpenTelemetry MCP conventions).
  const mcp = env.tracer.later(
    `tools/call ${p.tool}`,
    trace,
    { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': p.tool, 'mhs.command_id': commandId },
    SpanKind.CLIENT,
  );
  let result: ToolCallResult;
  try {
    result = await ep.sendCommand(
      device.device_id,
      p.tool,
      { ...input, _mhs: control },
      { timeoutMs, meta, ...(req.signal ? { signal: req.signal } : {}) },
      // Issue 16: its deadline runs from the send, after any wait in the lane.
      () => {
        mcp.start();
        cmd.send({ type: 'sent', at: env.clock.now() });
      },
    );
  } catch (err) {
    const e = toHostError(err, ErrorCode.TRANSPORT_DISCONNECTED);
    mcp.end(e.code);
    env.tracer.end(trace, e.code);
    throw await failAfterIntent(env, cmd, e);
  }
  mcp.end(result.isError ? 'tool_error' : undefined);

  // 6. Fault (nothing executed) or receipt.
  // Issue 16 item 3: a reply JCS cannot encode is a protocol fault of this endpoint alone, never a store outage.
  const unencodable = unencodableReply(ep.endpointId, commandId, result.isError ? 'fault' : 'receipt', result);
  if (unencodable && !result.isError) {
    // A receipt came back, so the command may have executed: its outcome is unknown until reconciled (HOST-091).
    await appendOrReport(env, protocolFaultEntry(unencodable, device.device_id, traceparent));
    env.tracer.end(trace, ErrorCode.OUTCOME_UNKNOWN);
    throw await failAfterIntent(env, cmd, unencodable);
  }
  if (result.isError) {
    // A fault executed nothing (wire contract §4); one that cannot be recorded is reported as the protocol fault.
    const fault = unencodable ?? faultError(result);
    cmd.send({ type: 'reply.fault', code: fault.code });
    if (fault.code === ErrorCode.SESSION_EXPIRED || fault.code === ErrorCode.SESSION_UNKNOWN)
      ep.sessionExpired(lease.sessionId); // HOST-036: reopen on the next call, never resend this one
    const ledgerError = await appendOrReport(env, {
      kind: 'error',
      phase: 'endpoint_fault',
      command_id: commandId,
      endpoint_id: ep.endpointId,
      device_id: device.device_id,
      executed: false,
      error: fault.toWire(),
      traceparent,
    });
    env.tracer.end(trace, fault.code);
    throw new HostError(
      fault.code,
      fault.message,
      { ...fault.details, command_id: commandId, executed: false, ...ledgerError },
      {
        remediation: fault.remediation,
      },
    );
  }
  let receipt = receiptFor(result.structuredContent, p);
  // HOST-084: a composition receipt carries its digest and every child receipt, checked before any is recorded.
  const children = receipt && c.composition ? compositionChildren(receipt, commandId, c.composition.digest) : [];
  if (!receipt || !children) {
    env.tracer.end(trace, ErrorCode.OUTCOME_UNKNOWN);
    throw await failAfterIntent(
      env,
      cmd,
      new HostError(
        ErrorCode.HOST_INTERNAL,
        'endpoint answered with something that is not the receipt of this command',
        {
          answer: result.structuredContent,
        },
      ),
    );
  }
  for (const child of children)
    void recordReceipt(env, cmd, child, {
      parent_command_id: commandId,
      composition_digest: c.composition?.digest,
    }).catch(() => undefined); // a failed append is reported by recordReceipt and reopens reconciliation
  let recorded = recordReceipt(
    env,
    cmd,
    receipt,
    c.composition ? { composition_digest: c.composition.digest, children: children.length } : {},
  );
  let outcome = applyReceipt(cmd, receipt);
  if (outcome === 'running') {
    const first = receipt;
    receipt = await followOperation(env, ep, p, receipt, {
      pollMs: Math.min(250, Math.max(10, Math.floor(binding.typical_duration_ms / 5))),
      limitMs: env.followLimitMs ?? binding.max_duration_ms + env.transportMarginMs,
      ...(req.signal ? { signal: req.signal } : {}),
    });
    if (receipt !== first) recorded = recordReceipt(env, cmd, receipt, { followed: true });
    outcome = applyReceipt(cmd, receipt);
    if (outcome === 'running') cmd.send({ type: 'follow.ended' });
  }
  // 7. The full receipt, never a summary (HOST-033).
  env.tracer.end(trace, receipt.error?.mhs_code);
  const seq = recorded.then((e) => e.seq);
  // Awaiting `recorded` writes a receipt still waiting for the next intent's group commit right away.
  const lazy: PromiseLike<number> = {
    then: (ok, fail) => {
      void env.batcher.flush();
      return seq.then(ok, fail);
    },
  };
  return { commandId, outcome, receipt, traceparent, intentSeq, recorded: lazy };
}

/**
 * After the intent: a pre-send failure is recorded `command.not_sent` and reopens the gate (a safe retry); any
 * other failure is recorded `command.unknown`, keeps the gate shut and becomes `MHS.OUTCOME.UNKNOWN` (HOST-091).
 */
async function failAfterIntent(env: CallEnv, cmd: CommandActor, e: HostError): Promise<HostError> {
  const p = cmd.p;
  const base = {
    command_id: p.commandId,
    endpoint_id: p.endpointId,
    device_id: p.deviceId,
    traceparent: p.traceparent,
  };
  if (isPreSend(e)) {
    cmd.send({ type: 'reply.presend', code: e.code });
    const ledgerError = await appendOrReport(env, { kind: 'command.not_sent', ...base, error: e.toWire() });
    return new HostError(
      e.code,
      e.message,
      { ...e.details, ...base, sent: false, ...ledgerError },
      {
        remediation: e.remediation || 'Nothing was sent; the command can be retried.',
        retryable: true,
      },
    );
  }
  cmd.send({ type: 'reply.lost', code: e.code });
  const ledgerError = await appendOrReport(env, { kind: 'command.unknown', ...base, cause: e.toWire() });
  return new HostError(
    ErrorCode.OUTCOME_UNKNOWN,
    `the outcome of ${p.commandId} on ${p.deviceId} is unknown (${e.code}): it may have executed`,
    { ...base, cause_code: e.code, ...ledgerError },
    {
      remediation:
        'Observe the device: reconcile this command (same-id retry or mhs__operations) before sending another.',
      retryable: false,
      cause: e,
    },
  );
}

/**
 * Appends an outcome entry whose physical outcome the caller already reports. A failed append is never dropped
 * (HOST-093): it goes to `onBackgroundError` and comes back as `{ledger_error}` for the thrown error's details.
 * The intent is durable, so recovery still settles the command from the endpoint.
 */
async function appendOrReport(
  env: CallEnv,
  entry: LedgerAppend,
): Promise<{ ledger_error: MhsWireError } | Record<string, never>> {
  try {
    await env.ledger.append(entry);
    return {};
  } catch (err) {
    const le = toHostError(err, ErrorCode.HOST_LEDGER_UNAVAILABLE);
    env.onBackgroundError?.(le);
    return { ledger_error: le.toWire() };
  }
}

/**
 * The fences of an intent's transaction (issue 19): the endpoint lease first (a process that lost the endpoint
 * detaches it and sends nothing), then the run lease of the run making the call, then a forwarded call's claim.
 */
function fenceOf(ep: EndpointActor, req: InvokeRequest, commandId: string): { fence?: (t: Db) => Promise<void> } {
  const fences = [ep.fence, req.runFence, req.intentFence && ((t: Db) => req.intentFence!(t, commandId))].filter(
    (f): f is (t: Db) => Promise<void> => f !== undefined,
  );
  if (fences.length === 0) return {};
  if (fences.length === 1) return { fence: fences[0]! };
  return {
    fence: async (t) => {
      for (const f of fences) await f(t);
    },
  };
}
