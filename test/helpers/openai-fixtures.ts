/**
 * OpenAI Chat Completions wire fixtures, written from the public API reference (the `chat.completion` object,
 * `chat.completion.chunk` SSE frames `data: {...}` ending with `data: [DONE]`, `stream_options.include_usage`'s
 * final chunk with empty `choices` and `usage`, and the `{"error": {message, type, param, code}}` body), not from
 * mhs-host's own code. Imports nothing from vitest.
 */
import type { WireReply } from './wire-server.js';

const CREATED = 1_741_570_283;

/** A tool call as the model returns it. */
export interface FixtureCall {
  id: string;
  name: string;
  /** The raw `function.arguments` string (JSON text, as the API sends it). */
  arguments: string;
}

/** Usage as the API reports it. */
export function oaUsage(prompt: number, completion: number) {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/** A non-streamed `chat.completion`. */
export function oaCompletion(o: {
  model: string;
  content?: string | null;
  calls?: FixtureCall[];
  usage: [number, number];
}): WireReply {
  const calls = o.calls ?? [];
  return {
    json: {
      id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
      object: 'chat.completion',
      created: CREATED,
      model: o.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: o.content ?? null,
            ...(calls.length
              ? {
                  tool_calls: calls.map((c) => ({
                    id: c.id,
                    type: 'function',
                    function: { name: c.name, arguments: c.arguments },
                  })),
                }
              : {}),
            refusal: null,
            annotations: [],
          },
          logprobs: null,
          finish_reason: calls.length ? 'tool_calls' : 'stop',
        },
      ],
      usage: oaUsage(...o.usage),
      service_tier: 'default',
      system_fingerprint: 'fp_fc9f1d7035',
    },
  };
}

function chunk(model: string, choices: unknown[], usage: unknown = null): string {
  return `data: ${JSON.stringify({
    id: 'chatcmpl-123',
    object: 'chat.completion.chunk',
    created: CREATED,
    model,
    system_fingerprint: 'fp_44709d6fcb',
    choices,
    usage,
  })}\n\n`;
}

/**
 * A streamed completion: a role chunk, the text in `pieces`, a `refusal` delta when given, each tool call opened
 * with id/type/name and its arguments in `argPieces` fragments, the finish chunk (`finish`, default `stop` or
 * `tool_calls`), the usage chunk, `[DONE]`.
 */
export function oaStream(o: {
  model: string;
  pieces?: string[];
  refusal?: string;
  calls?: Array<{ id: string; name: string; argPieces: string[] }>;
  finish?: 'stop' | 'length' | 'content_filter';
  usage: [number, number];
}): WireReply {
  const calls = o.calls ?? [];
  const frames = [
    chunk(o.model, [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]),
  ];
  for (const p of o.pieces ?? [])
    frames.push(chunk(o.model, [{ index: 0, delta: { content: p }, logprobs: null, finish_reason: null }]));
  if (o.refusal !== undefined)
    frames.push(chunk(o.model, [{ index: 0, delta: { refusal: o.refusal }, logprobs: null, finish_reason: null }]));
  calls.forEach((c, i) => {
    frames.push(
      chunk(o.model, [
        {
          index: 0,
          delta: { tool_calls: [{ index: i, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] },
          logprobs: null,
          finish_reason: null,
        },
      ]),
    );
    for (const a of c.argPieces)
      frames.push(
        chunk(o.model, [
          {
            index: 0,
            delta: { tool_calls: [{ index: i, function: { arguments: a } }] },
            logprobs: null,
            finish_reason: null,
          },
        ]),
      );
  });
  frames.push(
    chunk(o.model, [
      { index: 0, delta: {}, logprobs: null, finish_reason: o.finish ?? (calls.length ? 'tool_calls' : 'stop') },
    ]),
  );
  frames.push(chunk(o.model, [], oaUsage(...o.usage)));
  frames.push('data: [DONE]\n\n');
  return { sse: frames };
}

/** An error reply with the API's error body. */
export function oaError(
  status: number,
  e: { message: string; type: string; code: string | null; param?: string | null },
  headers: Record<string, string> = {},
): WireReply {
  return {
    status,
    headers,
    json: { error: { message: e.message, type: e.type, param: e.param ?? null, code: e.code } },
  };
}
