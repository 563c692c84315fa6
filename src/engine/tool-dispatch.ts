/**
 * Model tool-call dispatch (HOST-020, 033, 062, 072): a capability tool call becomes one `engine.invoke` (the
 * governed path) with any `_mhs` the model sent stripped; the model gets the FULL receipt back, or the full error
 * with `mhs_code` and remediation, never a summary. Every call writes one `tool_call` ledger entry (tool, input
 * digest, command_id, outcome, receipt digest, traceparent) and two transcript items (the call and its result).
 */
import { ErrorCode, H, HostError, toHostError, unencodablePath, wellFormed } from '../core/index.js';
import type { Artifacts } from '../ledger/artifacts.js';
import type { Ledger } from '../ledger/ledger-types.js';
import { redactPaths } from '../ledger/redaction.js';
import { bindingDigest } from '../ledger/transcript-binding.js';
import type { CallPrincipal } from './call-types.js';
import type { Engine } from './engine.js';
import type { SafetyActions } from '../policy/estop.js';
import { estopResult, evidenceResult, inspectResult } from './tool-gateway-calls.js';
import { InputSchemaCache } from './schema-cache.js';
import { devicesResult, operationsResult, readResult, safetyResult } from './tool-fixed-calls.js';
import type { ModelTool, ToolSurface } from './tool-surface.js';
import type { DisclosureRequest } from './session-disclosure.js';
import { EngineTracer } from './tracing.js';

/** A tool call as a model made it. */
export interface ModelToolCall {
  id: string;
  name: string;
  arguments: unknown;
}

/** What dispatch needs. */
export interface ToolDispatchDeps {
  engine: Pick<Engine, 'invoke' | 'read' | 'handle' | 'handles' | 'pending' | 'reconcile' | 'collectEvidence'>;
  ledger: Ledger;
  /** Where transcript items go (the export's transcript.jsonl, HOST-054). */
  transcript?: Pick<Artifacts, 'appendTranscript'>;
  tracer?: EngineTracer;
  /** Validators of the fixed tools' arguments. */
  schemas?: InputSchemaCache;
  /** The trusted e-stop behind `mhs__estop` (gateway surface); without it the tool is refused. */
  safety?: Pick<SafetyActions, 'estop'>;
}

/** The agent run a call belongs to. */
export interface DispatchContext {
  /** Names the transcript session and the `tool_call` entries. */
  agentRunId: string;
  /** Session scope of the capability calls (HOST-034); default `agentRunId`. */
  taskId?: string;
  /** Trace of the run; each call is a child span of it. */
  trace?: { traceparent: string; tracestate?: string };
  signal?: AbortSignal;
  /** Who the calls are made for (from the connection, never from arguments); on `tool_call` and the intent. */
  principal?: CallPrincipal;
  /** Aborts only a capability call's wait for an approval; the approval stays pending (see `InvokeRequest`). */
  approvalSignal?: AbortSignal;
  /** Approval key of a capability call: a repeated call with the same key reuses its open approval (HOST-041). */
  approvalKey?: string;
  /** The surface that shows a session's disclosure before its first capability call (HOST-003). */
  disclosure?: DisclosureRequest;
}

/** The outcome of one model tool call: exactly what goes back to the model, plus its ledger links. */
export interface DispatchedCall {
  callId: string;
  tool: string;
  /** True for faults and refusals by the host; a rejected receipt is `false` (HOST-062). */
  isError: boolean;
  /** `{command_id, outcome, receipt}`, a read result, or `{error: MhsError}`. */
  result: Record<string, unknown>;
  /** The command the call created (capability tools) or observed (`mhs__operations`). */
  commandId: string | null;
  /** Seq of the `tool_call` ledger entry. */
  ledgerSeq: number;
  traceparent: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function unknownTool(name: string, surface: ToolSurface): HostError {
  return new HostError(
    ErrorCode.SCHEMA_INVALID_INPUT,
    `no tool ${name} is offered`,
    { tool: name, reason: 'unknown_tool', offered: surface.tools.map((t) => t.name) },
    { remediation: 'Call one of the tools in the current tool list.' },
  );
}

function unencodableCall(call: ModelToolCall): HostError | null {
  const path = unencodablePath({ id: call.id, name: call.name, arguments: call.arguments });
  if (path === null) return null;
  return new HostError(
    ErrorCode.SCHEMA_INVALID_INPUT,
    `the tool call holds a string canonical JSON cannot encode (a lone UTF-16 surrogate) at ${path}`,
    { path, reason: 'lone_surrogate' },
    { remediation: 'Send well-formed Unicode text: every UTF-16 surrogate must be part of a pair.' },
  );
}

/**
 * Dispatches one model tool call. Never throws for a bad or refused call (the error is the result the model
 * sees); throws `MHS.HOST.LEDGER_UNAVAILABLE` when the `tool_call` entry or a transcript item cannot be written.
 */
export async function dispatchToolCall(
  deps: ToolDispatchDeps,
  surface: ToolSurface,
  modelCall: ModelToolCall,
  ctx: DispatchContext,
): Promise<DispatchedCall> {
  // Issue 16 item 3: a call JCS cannot encode is refused as the model's fault (no arguments are kept), and
  // recorded under well-formed names, so neither the transcript nor the ledger sees the bad string.
  const refused = unencodableCall(modelCall);
  const call: ModelToolCall = refused
    ? { id: wellFormed(String(modelCall.id)), name: wellFormed(String(modelCall.name)), arguments: {} }
    : modelCall;
  const tracer = deps.tracer ?? new EngineTracer();
  const tool = surface.get(call.name);
  const span = tracer.start(`mhs.tool_call ${call.name}`, ctx.trace, { 'mhs.tool': call.name });
  const args = isObject(call.arguments) ? call.arguments : null;
  // Wire contract §4: control fields are the host's; whatever the model put in `_mhs` is dropped here.
  const control = args && '_mhs' in args ? args._mhs : undefined;
  const input: Record<string, unknown> = args ? { ...args } : {};
  delete input._mhs;
  const inputDigest = H(input);
  const target = tool?.target;
  const redaction = target
    ? ((await deps.engine.handles()).find((e) => e.endpointId === target.endpointId)?.manifest.redaction.paths ?? [])
    : [];

  const callItem: Record<string, unknown> = {
    kind: 'tool_call',
    session_id: ctx.agentRunId,
    call_id: call.id,
    tool: call.name,
    input: JSON.parse(JSON.stringify(input)) as unknown, // a copy: redaction below must not touch what is sent
    input_digest: inputDigest,
    ...(control !== undefined ? { control_stripped: isObject(control) ? Object.keys(control).sort() : ['_mhs'] } : {}),
  };
  redactPaths(callItem, redaction); // HOST-056: the adapter's redaction applies to the transcript too
  await appendItem(deps, callItem);

  let result: Record<string, unknown>;
  let isError = false;
  let commandId: string | null = null;
  const entry: Record<string, unknown> = {};
  try {
    if (refused) throw refused;
    if (!tool) throw unknownTool(call.name, surface);
    if (!args)
      throw new HostError(ErrorCode.SCHEMA_INVALID_INPUT, 'tool arguments must be a JSON object', { tool: call.name });
    result = await run(deps, surface, tool, input, span.traceparent, ctx);
    if (tool.kind === 'capability' || tool.kind === 'composition') {
      commandId = String(result.command_id);
      const receipt = result.receipt as Record<string, unknown>;
      Object.assign(entry, {
        outcome: result.outcome,
        status: receipt.status,
        receipt_id: receipt.receipt_id,
        receipt_digest: H(receipt),
        intent_seq: result.intent_seq,
        receipt_seq: result.receipt_seq,
      });
      delete result.intent_seq;
      delete result.receipt_seq;
    } else {
      // An observation is linked to the command it observed.
      if (tool.kind === 'operations') commandId = String(input.command_id);
      Object.assign(entry, { outcome: 'ok' });
    }
  } catch (err) {
    const e = toHostError(err);
    isError = true;
    result = { error: e.toWire() }; // HOST-072: code, message, remediation and details, never hidden
    if (typeof e.details.command_id === 'string') commandId = e.details.command_id;
    Object.assign(entry, { outcome: 'error', error: { mhs_code: e.code, remediation: e.remediation } });
  }
  tracer.end(span, isError ? String((result.error as { mhs_code: string }).mhs_code) : undefined);
  const resultItem: Record<string, unknown> = {
    kind: 'tool_result',
    session_id: ctx.agentRunId,
    call_id: call.id,
    tool: call.name,
    is_error: isError,
    command_id: commandId,
    result,
  };
  // Issue 20: the ledger entry binds both transcript items, so an edited or dropped line no longer matches.
  const transcriptDigests = deps.transcript
    ? { transcript_digests: { call: bindingDigest(callItem), result: bindingDigest(resultItem) } }
    : {};

  let seq: number;
  try {
    seq = (
      await deps.ledger.append({
        kind: 'tool_call',
        agent_run_id: ctx.agentRunId,
        call_id: call.id,
        tool: call.name,
        tool_kind: tool?.kind ?? null,
        ...(ctx.principal ? { principal: ctx.principal } : {}),
        ...(target
          ? {
              endpoint_id: target.endpointId,
              device_id: target.deviceId,
              capability_id: target.capabilityId,
              manifest_digest: target.manifestDigest,
            }
          : {}),
        input_digest: inputDigest,
        ...(callItem.control_stripped ? { control_stripped: callItem.control_stripped } : {}),
        command_id: commandId,
        is_error: isError,
        ...entry,
        result_digest: H(result),
        ...transcriptDigests,
        traceparent: span.traceparent,
      })
    ).seq;
  } catch (err) {
    throw toHostError(err, ErrorCode.HOST_LEDGER_UNAVAILABLE);
  }
  await appendItem(deps, { ...resultItem, ledger_seq: seq });
  return {
    callId: call.id,
    tool: call.name,
    isError,
    result,
    commandId,
    ledgerSeq: seq,
    traceparent: span.traceparent,
  };
}

async function appendItem(deps: ToolDispatchDeps, item: Record<string, unknown>): Promise<void> {
  if (!deps.transcript) return;
  try {
    await deps.transcript.appendTranscript(item as { kind: string });
  } catch (err) {
    throw toHostError(err, ErrorCode.HOST_LEDGER_UNAVAILABLE);
  }
}

async function run(
  deps: ToolDispatchDeps,
  surface: ToolSurface,
  tool: ModelTool,
  input: Record<string, unknown>,
  traceparent: string,
  ctx: DispatchContext,
): Promise<Record<string, unknown>> {
  if ((tool.kind === 'capability' || tool.kind === 'composition') && tool.target) {
    const t = tool.target;
    const res = await deps.engine.invoke({
      endpointId: t.endpointId,
      deviceId: t.deviceId,
      capabilityId: t.capabilityId,
      input,
      taskId: ctx.taskId ?? ctx.agentRunId,
      trace: { traceparent },
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(ctx.principal ? { principal: ctx.principal } : {}),
      ...(ctx.approvalSignal ? { approvalSignal: ctx.approvalSignal } : {}),
      ...(ctx.approvalKey ? { approvalKey: ctx.approvalKey } : {}),
      ...(ctx.disclosure ? { disclosure: ctx.disclosure } : {}),
    });
    const receiptSeq = await res.recorded;
    // HOST-033: the full receipt, whatever its status; HOST-013: the session's disclosure with its first result.
    return {
      command_id: res.commandId,
      outcome: res.outcome,
      receipt: res.receipt,
      intent_seq: res.intentSeq,
      receipt_seq: receiptSeq,
      ...(res.disclosure ? { disclosure: res.disclosure } : {}),
    };
  }
  const schemas = deps.schemas ?? new InputSchemaCache();
  schemas.validate(
    { manifestDigest: surface.key, deviceId: '(host)', capabilityId: tool.name },
    tool.inputSchema as Record<string, unknown>,
    input,
  );
  switch (tool.kind) {
    case 'devices':
      return devicesResult(deps.engine, input.endpoint_id as string | undefined);
    case 'read':
      return readResult(deps.engine, input);
    case 'safety':
      return safetyResult(deps.engine, input, traceparent);
    case 'operations':
      return operationsResult(deps.engine, deps.ledger, String(input.command_id), traceparent);
    case 'inspect':
      return inspectResult(deps.engine, input);
    case 'evidence':
      return evidenceResult(deps.engine, deps.ledger, input, traceparent);
    case 'estop':
      return estopResult(deps.engine, deps.safety, input, ctx.principal);
    default:
      throw new HostError(ErrorCode.HOST_INTERNAL, `tool ${tool.name} has no handler`, { tool: tool.name });
  }
}
