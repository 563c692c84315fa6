/**
 * The Anthropic Messages wire mapping: system prompt, conversation and tools out, the assembled message back as
 * a {@link ModelTurn}. Pure: no SDK client, no I/O.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { ErrorCode, HostError } from '../../core/index.js';
import type {
  ModelFinish,
  ModelMessage,
  ModelTurn,
  OutputFormat,
  ProviderTool,
  ProviderToolCall,
} from '../model-provider.js';

type MessageParam = Anthropic.Messages.MessageParam;
type Block = Exclude<MessageParam['content'], string>[number];

/** The Messages request's `system`, `messages` and `tools` for a conversation. */
export interface AnthropicConversation {
  system?: string;
  messages: MessageParam[];
}

/**
 * System messages become the top-level `system`; assistant tool calls are `tool_use` blocks; tool results are
 * `tool_result` blocks (content: the FULL host object as JSON, HOST-033; `is_error` as the host decided), all
 * results of one turn in one user message, and consecutive same-role messages merged as the API requires.
 */
export function toAnthropicConversation(messages: readonly ModelMessage[]): AnthropicConversation {
  const system = messages.flatMap((m) => (m.role === 'system' ? [m.content] : []));
  const out: MessageParam[] = [];
  const push = (role: 'user' | 'assistant', blocks: Block[]) => {
    const last = out.at(-1);
    if (last && last.role === role) (last.content as Block[]).push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    if (m.role === 'tool')
      push('user', [
        { type: 'tool_result', tool_use_id: m.toolCallId, content: JSON.stringify(m.content), is_error: m.isError },
      ]);
    else if (m.role === 'user') push('user', [{ type: 'text', text: m.content }]);
    else if (m.role === 'assistant')
      push('assistant', [
        ...(m.content ? [{ type: 'text' as const, text: m.content }] : []),
        ...m.toolCalls.map((c) => ({ type: 'tool_use' as const, id: c.id, name: c.name, input: c.arguments })),
      ]);
  }
  return { ...(system.length ? { system: system.join('\n\n') } : {}), messages: out };
}

/** The generated tool surface as Messages tools (name, generated description, `input_schema`). */
export function toAnthropicTools(tools: readonly ProviderTool[]): Anthropic.Messages.Tool[] {
  return tools.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: { type: 'object', ...(t.inputSchema as Record<string, unknown>) },
  }));
}

function toolInput(name: string, input: unknown): Record<string, unknown> {
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) return input as Record<string, unknown>;
  throw new HostError(
    ErrorCode.HOST_MODEL_RESPONSE_INVALID,
    `the model's input for ${name} is not a JSON object`,
    { reason: 'tool_arguments', tool: name },
    { remediation: 'Use a model with reliable tool calling, or run again.' },
  );
}

/**
 * An assembled message as a turn: `tool_use` blocks → `tool_calls` (with the text blocks joined), else `final`.
 * `usage.inputTokens` counts every prompt token the API reports (`input_tokens` plus cache creation and cache
 * reads); `outputTokens` is `output_tokens`.
 * @throws HostError `MHS.HOST.MODEL_RESPONSE_INVALID` (reason `truncated`) for a tool call cut off by `max_tokens`.
 */
export function fromAnthropicMessage(m: Anthropic.Messages.Message): ModelTurn {
  const u = m.usage;
  const usage = {
    inputTokens: u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0),
    outputTokens: u.output_tokens,
  };
  const text = m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
  const calls: ProviderToolCall[] = m.content.flatMap((b) =>
    b.type === 'tool_use' ? [{ id: b.id, name: b.name, arguments: toolInput(b.name, b.input) }] : [],
  );
  if (calls.length && (m.stop_reason === 'max_tokens' || m.stop_reason === 'model_context_window_exceeded'))
    throw new HostError(
      ErrorCode.HOST_MODEL_RESPONSE_INVALID,
      `the model's tool call was cut off (${m.stop_reason})`,
      { reason: 'truncated', tool: calls.at(-1)!.name },
      { remediation: 'Raise --max-tokens, or use a model with a larger context window.' },
    );
  if (calls.length) return { kind: 'tool_calls', calls, ...(text ? { text } : {}), usage };
  return { kind: 'final', text, usage };
}

/**
 * Structured output as one forced tool (`tool_choice: {type: "tool"}`): the model must answer with a `tool_use`
 * block whose `input` is the JSON value. Forced tool use works on every Claude model and through the GA Messages
 * API; the `output_format` JSON outputs are a beta on some models only.
 */
export function toOutputTool(o: OutputFormat): {
  tools: Anthropic.Messages.Tool[];
  tool_choice: Anthropic.Messages.ToolChoiceTool;
} {
  return {
    tools: [
      {
        name: o.name,
        description: 'Answer by calling this tool once; its input is your whole answer.',
        input_schema: { type: 'object', ...(o.schema as Record<string, unknown>) },
      },
    ],
    tool_choice: { type: 'tool', name: o.name },
  };
}

/**
 * The forced tool's `input` as a final answer (JSON text). `max_tokens` (or a full context window) is `length`:
 * the input may be cut short; `refusal` is a refusal (text dropped: it may echo the prompt).
 */
export function fromAnthropicStructured(m: Anthropic.Messages.Message, name: string): ModelTurn {
  const u = m.usage;
  const usage = {
    inputTokens: u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0),
    outputTokens: u.output_tokens,
  };
  const stop = m.stop_reason as string | null;
  const finish: ModelFinish =
    stop === 'refusal'
      ? 'refusal'
      : stop === 'max_tokens' || stop === 'model_context_window_exceeded'
        ? 'length'
        : 'stop';
  if (finish === 'refusal') return { kind: 'final', text: '', finish, usage };
  const use = m.content.find((b) => b.type === 'tool_use' && b.name === name);
  const text =
    use && use.type === 'tool_use'
      ? JSON.stringify(use.input)
      : m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
  return { kind: 'final', text, ...(finish === 'length' ? { finish } : {}), usage };
}
