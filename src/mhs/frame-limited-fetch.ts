/**
 * A `fetch` wrapper for the SDK's Streamable HTTP transport that enforces the frame limit while the response
 * body is read (HOST-063, issue 16), so an endpoint cannot make the host buffer an unbounded reply. A JSON body,
 * or one SSE event, that passes `limit` bytes is cut there (the rest is never read) and replaced by a JSON-RPC
 * error with {@link FRAME_TOO_LARGE_RPC_CODE} for each request of the POST, which the connector reports as
 * `MHS.TRANSPORT.FRAME_TOO_LARGE` for that call. An SSE stream is passed through event by event; only the event
 * being read is held (at most `limit` bytes). A stream without a request (the GET stream) is ended with an error.
 */
import type { FetchLike } from '@modelcontextprotocol/client';
import { frameTooLargeReply } from './frame-guard.js';

type Id = string | number;

/** Ids of the JSON-RPC requests in an outbound POST body (the SDK sends a JSON string). */
function requestIds(body: unknown): Id[] {
  if (typeof body !== 'string') return [];
  try {
    const parsed = JSON.parse(body) as unknown;
    return (Array.isArray(parsed) ? parsed : [parsed])
      .filter((m: { id?: unknown; method?: unknown }) => typeof m?.method === 'string' && m.id !== undefined)
      .map((m: { id: Id }) => m.id);
  } catch {
    return [];
  }
}

function frameError(bytes: number, limit: number): Error {
  return new Error(`an inbound frame passed ${bytes} bytes, over the ${limit}-byte frame limit; cut`);
}

function headersWithout(h: Headers, ...names: string[]): Headers {
  const out = new Headers(h);
  for (const n of names) out.delete(n);
  return out;
}

/** A whole (non-SSE) body, read up to `limit`; over it, the refusal replies (JSON) or an erroring body. */
async function limitWholeBody(res: Response, limit: number, ids: Id[]): Promise<Response> {
  const json = (res.headers.get('content-type') ?? '').toLowerCase().includes('application/json');
  const refuse = async (bytes: number, reader?: ReadableStreamDefaultReader<Uint8Array>) => {
    await (reader ? reader.cancel() : res.body?.cancel())?.catch(() => undefined);
    if (json && res.ok && ids.length) {
      const replies = ids.map((id) => frameTooLargeReply(id, bytes, limit));
      return new Response(JSON.stringify(replies.length === 1 ? replies[0] : replies), {
        status: 200,
        headers: headersWithout(res.headers, 'content-length', 'content-encoding'),
      });
    }
    const err = frameError(bytes, limit);
    return new Response(new ReadableStream({ start: (c) => c.error(err) }), {
      status: res.status,
      headers: headersWithout(res.headers, 'content-length', 'content-encoding'),
    });
  };
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > limit) return refuse(declared);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    if (bytes > limit) return refuse(bytes, reader);
    chunks.push(value);
  }
  return new Response(Buffer.concat(chunks), {
    status: res.status,
    statusText: res.statusText,
    headers: headersWithout(res.headers, 'content-length', 'content-encoding'),
  });
}

/** Whether `a[s, e)` holds a byte other than CR (a line with content). */
const hasContent = (a: Uint8Array, s: number, e: number) => e - s > 1 || (e - s === 1 && a[s] !== 13);

/** Passes SSE events through whole; cuts the stream when the event being read passes `limit` bytes. */
function sseFrameLimit(limit: number, ids: Id[]): TransformStream<Uint8Array, Uint8Array> {
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  let lineEmpty = true;
  return new TransformStream({
    transform(chunk, controller) {
      let pos = 0;
      let from = 0;
      for (;;) {
        const nl = chunk.indexOf(10, pos);
        if (nl === -1) {
          if (hasContent(chunk, pos, chunk.length)) lineEmpty = false;
          break;
        }
        // A blank line ends an event: release it whole.
        if (lineEmpty && !hasContent(chunk, pos, nl)) {
          for (const h of held) controller.enqueue(h);
          controller.enqueue(chunk.subarray(from, nl + 1));
          held = [];
          heldBytes = 0;
          from = nl + 1;
        }
        lineEmpty = true;
        pos = nl + 1;
      }
      if (from < chunk.length) {
        held.push(chunk.subarray(from));
        heldBytes += chunk.length - from;
      }
      if (heldBytes <= limit) return;
      const bytes = heldBytes;
      held = [];
      if (!ids.length) return controller.error(frameError(bytes, limit));
      const text = ids.map((id) => `event: message\ndata: ${JSON.stringify(frameTooLargeReply(id, bytes, limit))}\n\n`);
      controller.enqueue(new TextEncoder().encode(text.join('')));
      // Ends the stream and cancels the body: the rest of the event is never read.
      controller.terminate();
    },
  });
}

/** Wraps `inner` so every response body is read under the frame limit (see the module comment). */
export function frameLimitedFetch(inner: FetchLike, limit: number): FetchLike {
  return async (url, init) => {
    const res = await inner(url, init);
    if (!res.body) return res;
    const ids = requestIds(init?.body);
    if ((res.headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream'))
      return new Response(res.body.pipeThrough(sseFrameLimit(limit, ids)), {
        status: res.status,
        statusText: res.statusText,
        headers: headersWithout(res.headers, 'content-length', 'content-encoding'),
      });
    return limitWholeBody(res, limit, ids);
  };
}
