// The operator event stream (`GET /v1/operator/events`), read with fetch so it can carry the bearer token.

/** One server-sent event. */
export interface ServerEvent {
  type: string;
  data: unknown;
}

/**
 * Reads the operator stream and calls `onEvent` for each event until `signal` aborts; reconnects after a drop
 * (the caller re-reads what it shows on `hello`, so nothing pushed while away is missed).
 */
export async function listen(token: string, signal: AbortSignal, onEvent: (e: ServerEvent) => void): Promise<void> {
  while (!signal.aborted) {
    await readStream('/v1/operator/events', token, {}, signal, onEvent).catch(() => undefined);
    if (!signal.aborted) await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Reads one event stream at `url` until it ends; rejects on a refusal or a network error. */
export async function readStream(
  url: string,
  token: string,
  headers: Record<string, string>,
  signal: AbortSignal,
  onEvent: (e: ServerEvent) => void,
): Promise<void> {
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers },
    signal,
  });
  if (!res.ok || !res.body) throw new Error(`event stream: ${res.status}`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const e = parse(buf.slice(0, i));
      buf = buf.slice(i + 2);
      if (e) onEvent(e);
    }
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
