/**
 * Anthropic Messages wire fixtures, written from the public API reference (the `message` object with `text` and
 * `tool_use` content blocks and `usage`; the SSE events `message_start`, `content_block_start`, `ping`,
 * `content_block_delta` with `text_delta` / `input_json_delta`, `content_block_stop`, `message_delta` with the
 * stop reason and output tokens, `message_stop`; and the `{"type": "error", "error": {type, message}}` body), not
 * from mhs-host's own code. Imports nothing from vitest.
 */
import type { WireReply } from './wire-server.js';

/** A tool use as the model returns it. */
export interface FixtureToolUse {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

function usage(input: number, output: number) {
  return {
    input_tokens: input,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: output,
    service_tier: 'standard',
  };
}

/** A non-streamed `message`. */
export function anMessage(o: {
  model: string;
  text?: string;
  uses?: FixtureToolUse[];
  usage: [number, number];
}): WireReply {
  const uses = o.uses ?? [];
  return {
    json: {
      id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
      type: 'message',
      role: 'assistant',
      model: o.model,
      content: [
        ...(o.text ? [{ type: 'text', text: o.text }] : []),
        ...uses.map((u) => ({ type: 'tool_use', id: u.id, name: u.name, input: u.input })),
      ],
      stop_reason: uses.length ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: usage(...o.usage),
    },
  };
}

function event(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/**
 * A streamed message: `message_start` (input tokens, output 1), a text block in `pieces`, then one `tool_use` block
 * per use with its input JSON split in `jsonPieces`, `message_delta` (stop reason `stop`, default `tool_use` or
 * `end_turn`; final output tokens), `message_stop`.
 */
export function anStream(o: {
  model: string;
  pieces?: string[];
  uses?: Array<{ id: string; name: string; jsonPieces: string[] }>;
  stop?: 'end_turn' | 'tool_use' | 'max_tokens' | 'refusal';
  usage: [number, number];
}): WireReply {
  const uses = o.uses ?? [];
  const frames = [
    event('message_start', {
      message: {
        id: 'msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY',
        type: 'message',
        role: 'assistant',
        content: [],
        model: o.model,
        stop_reason: null,
        stop_sequence: null,
        usage: usage(o.usage[0], 1),
      },
    }),
  ];
  let index = 0;
  if (o.pieces?.length) {
    frames.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
    frames.push(event('ping', {}));
    for (const p of o.pieces)
      frames.push(event('content_block_delta', { index, delta: { type: 'text_delta', text: p } }));
    frames.push(event('content_block_stop', { index }));
    index++;
  }
  for (const u of uses) {
    frames.push(
      event('content_block_start', { index, content_block: { type: 'tool_use', id: u.id, name: u.name, input: {} } }),
    );
    frames.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } }));
    for (const p of u.jsonPieces)
      frames.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: p } }));
    frames.push(event('content_block_stop', { index }));
    index++;
  }
  frames.push(
    event('message_delta', {
      delta: { stop_reason: o.stop ?? (uses.length ? 'tool_use' : 'end_turn'), stop_sequence: null },
      usage: { output_tokens: o.usage[1] },
    }),
  );
  frames.push(event('message_stop', {}));
  return { sse: frames };
}

/** An error reply with the API's error body. */
export function anError(
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): WireReply {
  return {
    status,
    headers: { 'request-id': 'req_011CSHoEeqs5C35K2UUqR7Fy', ...headers },
    json: { type: 'error', error: { type, message }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' },
  };
}
