// The operator event stream (`GET /v1/operator/events`), read with fetch so it can carry the bearer token.

/** One server-sent event. */
export interface ServerEvent {
  type: string;
  data: unknown;
}

/**
 * Reads the stream and calls `onEvent` for each event until `signal` aborts; reconnects after a drop (the
 * caller re-reads what it shows on `hello`, so nothing pushed while away is missed).
 */
export async function listen(token: string, signal: AbortSignal, onEvent: (e: ServerEvent) => void): Promise<void> {
  while (!signal.aborted) {
    try {
      const res = await fetch('/v1/operator/events', { headers: { authorization: `Bearer ${token}` }, signal });
      if (!res.ok || !res.body) throw new Error(`event stream: ${res.status}`);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const e = parse(buf.slice(0, i));
          buf = buf.slice(i + 2);
          if (e) onEvent(e);
        }
      }
    } catch {
      // aborted, or the network: retried below unless aborted
    }
    if (!signal.aborted) await new Promise((r) => setTimeout(r, 1000));
  }
}

function parse(block: string): ServerEvent | null {
  let type = '';
  let data = '';
  for (const line of block.split('\n')) {
    if (line.startsWith('event: ')) type = line.slice(7);
    else if (line.startsWith('data: ')) data += line.slice(6);
  }
  if (!type) return null;
  try {
    return { type, data: data ? (JSON.parse(data) as unknown) : null };
  } catch {
    return { type, data: null };
  }
}
