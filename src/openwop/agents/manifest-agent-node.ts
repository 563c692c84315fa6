import { Ajv2020 } from 'ajv/dist/2020.js';
import { ErrorCode } from '../../core/index.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeContext, NodeModule, NodeResult } from '../node-registry.js';
import { modelEffect } from '../services/model-effect.js';
import { recallCheckpoint } from '../services/recorded.js';
import { checkpointEvent, usageEvents, withoutUsage } from '../services/provider-usage.js';
import type { ModelUsage, UsageMeter } from '../services/provider-usage.js';
import type { RunEvent } from '../types.js';
import type { AgentRegistry, InstalledAgent } from './agent-registry.js';
import { emitOnce } from './emit-once.js';

/** A tool as the agent's model sees it (structurally the `ProviderTool` of src/ai). */
export interface AgentToolSpec {
  name: string;
  description: string;
  inputSchema: object;
}

/** One message of an agent's conversation (structurally the `ModelMessage` of src/ai). */
export type AgentMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls: AgentToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; isError: boolean; content: Record<string, unknown> };

export interface AgentToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** The model behind manifest agents (structurally the `ModelProvider` of src/ai, e.g. the scripted provider). */
export interface AgentModel {
  readonly name: string;
  /** Set when the model stands for an LLM provider: each call emits `provider.usage` (RFC 0026). */
  readonly meter?: UsageMeter;
  next(req: {
    messages: readonly AgentMessage[];
    tools: readonly AgentToolSpec[];
    signal?: AbortSignal;
  }): Promise<
    | { kind: 'tool_calls'; calls: AgentToolCall[]; text?: string; usage?: ModelUsage }
    | { kind: 'final'; text: string; usage?: ModelUsage }
  >;
}

/** A host tool a manifest agent may call when its `toolAllowlist` names it (`<scope>:<tool-id>`). */
export interface AgentTool extends Omit<AgentToolSpec, 'name'> {
  call(args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** What the manifest agent node works with. */
export interface ManifestAgentDeps {
  registry: AgentRegistry;
  model: AgentModel;
  /** Host tools by toolId; an agent is offered only those its toolAllowlist names. */
  tools: ReadonlyMap<string, AgentTool>;
  /** Plaintexts that must never reach an event, a variable or a handoff payload (SR-1). */
  secrets: () => readonly string[];
  handoffValidation: boolean;
  /** Most model turns per dispatched agent. */
  maxTurns: number;
}

/** Node type of the host workflow that runs one manifest agent as a dispatched child run. */
export const MANIFEST_AGENT_NODE = 'local.agent.manifest';

export const REDACTED = '[redacted]';

/** `v` with every occurrence of a secret plaintext replaced by `[redacted]` (strings anywhere in the value). */
export function redact<T>(v: T, secrets: readonly string[]): T {
  const live = secrets.filter((s) => s.length > 0);
  if (!live.length) return v;
  const walk = (x: unknown): unknown => {
    if (typeof x === 'string') return live.reduce((s, secret) => s.split(secret).join(REDACTED), x);
    if (Array.isArray(x)) return x.map(walk);
    if (x && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, y]) => [k, walk(y)]));
    return x;
  };
  return walk(v) as T;
}

function schemaErrors(schema: object, value: unknown): unknown[] {
  const validate = new Ajv2020({ strict: false, allErrors: true }).compile(schema);
  return validate(value)
    ? []
    : (validate.errors ?? []).map((e) => ({ path: e.instancePath || '/', message: e.message }));
}

function parseResult(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // not JSON: the text itself is the result
  }
  return { text };
}

type Turn = Awaited<ReturnType<AgentModel['next']>>;

/**
 * Runs one dispatched manifest agent (RFC 0070): the task is the child run's input variables (what the dispatch
 * inputMapping seeded), validated against `handoff.taskSchemaRef` with handoffValidation; the model gets the
 * pinned system prompt and only the allowlisted tools (RFC 0002 §A14). A call outside the allowlist is not made:
 * it is answered `tool_not_allowed` (status `forbidden`) and recorded as `agent.toolReturned`. The final answer
 * (JSON object, else `{text}`) is validated against `handoff.returnSchemaRef`, then becomes variable `result`.
 * Model turns are recorded, events written once, so a resumed node neither asks again nor repeats a tool call.
 */
async function runManifestAgent(ctx: NodeContext, d: ManifestAgentDeps): Promise<NodeResult> {
  const agentId = String(ctx.node.config.agentId ?? '');
  const agent: InstalledAgent | undefined = d.registry.get(agentId);
  if (!agent) throw new NodeFailure(ErrorCode.AGENT_NOT_FOUND, `no installed agent ${agentId}`, { agentId });
  const secrets = d.secrets();
  const clean = <T>(v: T): T => redact(v, secrets);
  const task = { ...ctx.variables };
  if (d.handoffValidation && agent.taskSchema) {
    const errors = schemaErrors(agent.taskSchema, task);
    if (errors.length)
      throw new NodeFailure(ErrorCode.HANDOFF_TASK_INVALID, 'task payload fails taskSchemaRef', { agentId, errors });
  }
  const allow = new Set(Array.isArray(agent.manifest.toolAllowlist) ? (agent.manifest.toolAllowlist as string[]) : []);
  const surface: AgentToolSpec[] = [...d.tools.entries()]
    .filter(([name]) => allow.has(name))
    .map(([name, t]) => ({ name, description: t.description, inputSchema: t.inputSchema }));
  const messages: AgentMessage[] = [
    { role: 'system', content: agent.systemPrompt },
    { role: 'user', content: JSON.stringify(task) },
  ];
  const base = `${ctx.runId}:${ctx.node.id}:${ctx.activation}`;
  const refused: string[] = [];
  let last: RunEvent | undefined;
  const cause = (): { causationId?: string } => (last ? { causationId: last.eventId } : {});
  for (let i = 0; i < d.maxTurns; i++) {
    const name = `manifest:turn:${i}`;
    const prior = recallCheckpoint(ctx, name);
    let turn: Turn;
    if (prior.found) turn = prior.value as Turn;
    else {
      let reply: Turn;
      try {
        // The effect record keeps the answer redacted, as the log does.
        // Not streamed: a known secret split across deltas would reach the log before the whole answer is redacted.
        ({ reply } = await modelEffect(
          ctx,
          name,
          { model: d.model.name, messages, tools: surface },
          async (_onText, sampling) =>
            clean(await d.model.next({ messages, tools: surface, signal: ctx.signal, ...sampling })),
        ));
      } catch (err) {
        if (err instanceof NodeFailure) throw err; // the effect guard's refusal, not the provider's
        throw new NodeFailure(ErrorCode.PROVIDER_UNAVAILABLE, `model ${d.model.name} failed`, {
          provider: d.model.name,
          cause: clean(err instanceof Error ? err.message : String(err)),
        });
      }
      turn = clean(withoutUsage(reply)) as Turn;
      // The answer and its provider.usage (RFC 0026) are appended together: a resumed node reads the answer only.
      await ctx.emit([
        ...usageEvents(ctx, d.model, { messages, tools: surface }, reply),
        checkpointEvent(ctx, name, turn),
      ]);
    }
    if (turn.kind === 'final') {
      const result = clean(parseResult(turn.text));
      if (d.handoffValidation && agent.returnSchema) {
        const errors = schemaErrors(agent.returnSchema, result);
        if (errors.length)
          throw new NodeFailure(ErrorCode.HANDOFF_RETURN_INVALID, 'result fails returnSchemaRef', { agentId, errors });
      }
      await emitOnce(ctx, {
        type: 'agent.decided',
        ...cause(),
        payload: { agentId, decision: { kind: 'final', result } },
      });
      return { outputs: { agentId, result, refusedToolCalls: refused }, variables: { result } };
    }
    if (turn.text)
      last = await emitOnce(
        ctx,
        { type: 'agent.reasoned', ...cause(), payload: { agentId, reasoning: turn.text, verbosity: 'full', turn: i } },
        (e) => e.payload.turn === i,
      );
    messages.push({ role: 'assistant', content: turn.text ?? null, toolCalls: turn.calls });
    for (const [j, call] of turn.calls.entries()) {
      const callId = `${base}:t${i}:${j}`;
      const called = await emitOnce(
        ctx,
        {
          type: 'agent.toolCalled',
          ...cause(),
          payload: { agentId, toolName: call.name, toolId: call.name, callId, inputs: clean(call.arguments) },
        },
        (e) => e.payload.callId === callId,
      );
      let returned = ctx.history.find((e) => e.type === 'agent.toolReturned' && e.payload.callId === callId);
      if (!returned) {
        let body: Record<string, unknown>;
        const tool = d.tools.get(call.name);
        if (!allow.has(call.name)) {
          body = {
            status: 'forbidden',
            error: { code: ErrorCode.TOOL_NOT_ALLOWED, message: `${call.name} is not in ${agentId}'s toolAllowlist` },
          };
        } else if (!tool) {
          body = { status: 'error', error: { code: ErrorCode.TOOL_UNAVAILABLE, message: `no host tool ${call.name}` } };
        } else {
          try {
            body = { status: 'ok', outcome: clean(await tool.call(call.arguments)) };
          } catch (err) {
            const message = clean(err instanceof Error ? err.message : String(err)) || 'tool failed';
            body = { status: 'error', error: { code: ErrorCode.TOOL_FAILED, message } };
          }
        }
        [returned] = await ctx.emit([
          {
            type: 'agent.toolReturned',
            causationId: called.eventId,
            payload: { agentId, toolName: call.name, toolId: call.name, callId, ...body },
          },
        ]);
      }
      last = returned!;
      const p = returned!.payload as { status?: string; outcome?: unknown; error?: { code: string } };
      if (p.status === 'forbidden') refused.push(call.name);
      messages.push({
        role: 'tool',
        toolCallId: call.id,
        name: call.name,
        isError: p.status !== 'ok',
        content: p.status === 'ok' ? { result: p.outcome ?? null } : { error: p.error ?? null },
      });
    }
  }
  throw new NodeFailure(ErrorCode.CAP_BREACHED, `${agentId} gave no final answer in ${d.maxTurns} turns`, {
    kind: 'agent-turns',
    limit: d.maxTurns,
  });
}

/** The `local.agent.manifest` node type (config `{agentId}`), bound to the host's registry, model and tools. */
export function manifestAgentNode(d: ManifestAgentDeps): NodeModule {
  return {
    typeId: MANIFEST_AGENT_NODE,
    validate: (node) =>
      typeof node.config.agentId === 'string' ? [] : [{ path: '/config/agentId', message: 'agentId is required' }],
    execute: (ctx) => runManifestAgent(ctx, d),
  };
}
