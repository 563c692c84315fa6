/**
 * The Chat Completions wire mapping (OpenAI and every server that speaks it): conversation and tools out, the
 * assembled completion back as a {@link ModelTurn}. Pure: no SDK client, no I/O.
 */
import type OpenAI from 'openai';
import { ErrorCode, HostError } from '../../core/index.js';
import type {
  ModelFinish,
  ModelMessage,
  ModelTurn,
  OutputFormat,
  ProviderTool,
  ProviderToolCall,
} from '../model-provider.js';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ChatTool = OpenAI.Chat.Completions.ChatCompletionTool;
type Completion = OpenAI.Chat.Completions.ChatCompletion;

/** The conversation as Chat Completions messages; a tool result's content is the FULL host object as JSON (HOST-033). */
export function toChatMessages(messages: readonly ModelMessage[]): ChatMessage[] {
  return messages.map((m): ChatMessage => {
    if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId, content: JSON.stringify(m.content) };
    if (m.role !== 'assistant') return { role: m.role, content: m.content };
    return {
      role: 'assistant',
      content: m.content,
      ...(m.toolCalls.length
        ? {
            tool_calls: m.toolCalls.map((c) => ({
              id: c.id,
              type: 'function' as const,
              function: { name: c.name, arguments: JSON.stringify(c.arguments) },
            })),
          }
        : {}),
    };
  });
}

/** The generated tool surface as function tools (name, generated description, JSON Schema parameters). */
export function toChatTools(tools: readonly ProviderTool[]): ChatTool[] {
  return tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.inputSchema as Record<string, unknown> },
  }));
}

/**
 * Structured output as `response_format: {type: "json_schema"}`. Not `strict`: strict mode needs every property
 * required and `additionalProperties: false` everywhere, which envelope payload schemas need not be; the host
 * validates the answer against the schema itself.
 */
export function toResponseFormat(o: OutputFormat): OpenAI.ResponseFormatJSONSchema {
  return {
    type: 'json_schema',
    json_schema: { name: o.name, schema: o.schema as Record<string, unknown>, strict: false },
  };
}

/** `finish_reason` (and `message.refusal`) as a {@link ModelFinish}: `length` truncated, `content_filter` refused. */
function finishOf(choice: Completion['choices'][number]): ModelFinish {
  if (choice.message.refusal || choice.finish_reason === 'content_filter') return 'refusal';
  return choice.finish_reason === 'length' ? 'length' : 'stop';
}

/**
 * Parses a tool call's `arguments` string; an empty string is `{}` (some local servers send it for no-argument calls).
 * @throws HostError `MHS.HOST.MODEL_RESPONSE_INVALID` (details.reason `tool_arguments`) when it is not a JSON object.
 */
export function parseToolArguments(name: string, raw: string | undefined): Record<string, unknown> {
  if (raw === undefined || raw.trim() === '') return {};
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    v = undefined;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new HostError(
      ErrorCode.HOST_MODEL_RESPONSE_INVALID,
      `the model's arguments for ${name} are not a JSON object`,
      { reason: 'tool_arguments', tool: name },
      { remediation: 'Use a model with reliable tool calling, or run again.' },
    );
  return v as Record<string, unknown>;
}

/**
 * The first choice of a completion (streamed and assembled by the SDK, or not streamed) as a turn: tool calls →
 * `tool_calls` (with any text), else `final` (with `finish` when truncated or refused); `usage` is the server's
 * `prompt_tokens` / `completion_tokens`.
 * @throws HostError `MHS.HOST.MODEL_RESPONSE_INVALID` for no choice or unusable tool arguments.
 */
export function fromChatCompletion(c: Completion): ModelTurn {
  const choice = c.choices[0];
  if (!choice)
    throw new HostError(
      ErrorCode.HOST_MODEL_RESPONSE_INVALID,
      'the completion has no choice',
      { reason: 'no_choice' },
      { remediation: 'The server returned an empty answer; run again or use another server.' },
    );
  const usage = c.usage
    ? { usage: { inputTokens: c.usage.prompt_tokens, outputTokens: c.usage.completion_tokens } }
    : {};
  const text = choice.message.content ?? undefined;
  const calls: ProviderToolCall[] = (choice.message.tool_calls ?? []).flatMap((t) =>
    t.type === 'function'
      ? [{ id: t.id, name: t.function.name, arguments: parseToolArguments(t.function.name, t.function.arguments) }]
      : [],
  );
  if (calls.length) return { kind: 'tool_calls', calls, ...(text ? { text } : {}), ...usage };
  const finish = finishOf(choice);
  // A refusal's text is not kept: it may echo the prompt (envelope-refusal-no-prompt-leak).
  if (finish === 'refusal') return { kind: 'final', text: '', finish, ...usage };
  return { kind: 'final', text: text ?? '', ...(finish === 'length' ? { finish } : {}), ...usage };
}
