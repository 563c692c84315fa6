// Issue 16 (HOST-063): the fetch wrapper passes SSE events through whole however the bytes are chunked, and
// replaces a JSON body or an SSE event over the limit by the frame refusal for the POST's request, cutting the
// body there (the rest is never read). In process, on a small limit.
import { describe, expect, it } from 'vitest';
import { FRAME_TOO_LARGE_RPC_CODE } from '../../src/mhs/frame-guard.js';
import { frameLimitedFetch } from '../../src/mhs/frame-limited-fetch.js';

const enc = new TextEncoder();
const post = { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: {} }) };

/** A response whose body is `parts`, then (when `endless`) `x` forever; counts the chunks pulled. */
function respond(type: string, parts: string[], endless = false) {
  let pulled = 0;
  const queue = parts.map((p) => enc.encode(p));
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      pulled++;
      const next = queue.shift();
      if (next) c.enqueue(next);
      else if (endless) c.enqueue(enc.encode('x'.repeat(64)));
      else c.close();
    },
  });
  return { fetch: async () => new Response(body, { headers: { 'content-type': type } }), pulled: () => pulled };
}

describe('frameLimitedFetch (issue 16)', () => {
  it('HOST-063: SSE events under the limit pass through whole, across any chunking', async () => {
    const text = 'event: message\ndata: {"a":1}\n\nevent: message\r\ndata: {"b":2}\r\n\r\n: c\n\n';
    const parts = [text.slice(0, 5), text.slice(5, 29), text.slice(29, 30), text.slice(30)];
    const r = await frameLimitedFetch(respond('text/event-stream', parts).fetch, 64)('http://x/mcp', post);
    expect(await r.text()).toBe(text);
  });

  it('HOST-063: an endless SSE event is cut at the limit and answered with the refusal for the request', async () => {
    const src = respond('text/event-stream', ['event: message\ndata: {"ok":1}\n\n', 'data: '], true);
    const r = await frameLimitedFetch(src.fetch, 256)('http://x/mcp', post);
    const events = (await r.text()).trim().split('\n\n');
    expect(events[0]).toBe('event: message\ndata: {"ok":1}');
    const refusal = JSON.parse((events[1] ?? '').split('data: ')[1] ?? '') as { id: number; error: { code: number } };
    expect(refusal).toMatchObject({ id: 7, error: { code: FRAME_TOO_LARGE_RPC_CODE, data: { limit: 256 } } });
    expect(src.pulled()).toBeLessThan(20);
  });

  it('HOST-063: a JSON body over the limit is replaced by the refusal; one under it is unchanged', async () => {
    const big = respond('application/json', ['{"jsonrpc":"2.0","id":7,"result":{"t":"'], true);
    const r = await frameLimitedFetch(big.fetch, 256)('http://x/mcp', post);
    expect(await r.json()).toMatchObject({ id: 7, error: { code: FRAME_TOO_LARGE_RPC_CODE } });
    const small = respond('application/json', ['{"jsonrpc":"2.0",', '"id":7,"result":{}}']);
    expect(await (await frameLimitedFetch(small.fetch, 256)('http://x/mcp', post)).json()).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: {},
    });
  });
});
