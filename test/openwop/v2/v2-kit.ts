// Helpers for the OpenWOP major-2 tests: the vendored v2 schemas and codemap as the oracle, and an HTTP client that
// speaks a chosen major to a real `mhs-host serve`.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ROOT } from '../../server/serve-helpers.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => void;

const V2_DIR = join(ROOT, 'vendor/openwop/schemas/v2');
export const V2_BASE = 'https://openwop.dev/spec/v2/';

let ajv: Ajv2020 | undefined;

/** Problems of `value` against a vendored v2 schema (`run-event`, `ids#/$defs/runId`, …); empty when valid. */
export function v2Problems(ref: string, value: unknown): string[] {
  if (!ajv) {
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    for (const f of readdirSync(V2_DIR).filter((x) => x.endsWith('.schema.json')))
      ajv.addSchema(JSON.parse(readFileSync(join(V2_DIR, f), 'utf8')) as object);
  }
  const [name, frag] = ref.split('#');
  const id = `${V2_BASE}${name}.schema.json${frag ? `#${frag}` : ''}`;
  const v = ajv.getSchema(id);
  if (!v) throw new Error(`no vendored v2 schema ${id}`);
  return v(value) ? [] : (v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
}

/**
 * Problems of a v2 event against the vendored `run-event.schema.json` (the `openwop-sdks` copy whose vendor branch
 * excludes every registered first segment, so a registered type matches exactly one `oneOf` branch and a vendor-looking
 * typo of a registered domain is refused).
 */
export function v2EventProblems(event: unknown): string[] {
  return v2Problems('run-event', event);
}

/** True when the vendored v2 capabilities schema is present (it is validated against when it is). */
export function hasV2Schema(name: string): boolean {
  return readdirSync(V2_DIR).includes(`${name}.schema.json`);
}

/** The published v1 → v2 event type map (vendor/openwop/spec/v2/event-codemap.json). */
export function codemap(): Map<string, string> {
  const doc = JSON.parse(readFileSync(join(ROOT, 'vendor/openwop/spec/v2/event-codemap.json'), 'utf8')) as {
    rows: Array<{ v1: string; v2: string }>;
  };
  return new Map(doc.rows.map((r) => [r.v1, r.v2]));
}

export interface Res {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** One HTTP call; `major` sets `OpenWOP-Version` (omit for none), `token` the bearer. */
export async function call(
  url: string,
  method: string,
  path: string,
  o: { token?: string; version?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Res> {
  const res = await fetch(url + path, {
    method,
    headers: {
      accept: 'application/json',
      ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
      ...(o.version !== undefined ? { 'openwop-version': o.version } : {}),
      ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...o.headers,
    },
    ...(o.body !== undefined ? { body: typeof o.body === 'string' ? o.body : JSON.stringify(o.body) } : {}),
  });
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}

/** Long-polls a v2 run's `eventsUrl` until the run is terminal; returns every event and the last poll body. */
export async function pollToEnd(url: string, eventsUrl: string, token: string): Promise<{ events: any[]; last: any }> {
  const events: any[] = [];
  let after: number | undefined;
  for (;;) {
    const q = `?timeout=5${after !== undefined ? `&afterSequence=${after}` : ''}`;
    const r = await call(url, 'GET', `${eventsUrl}/poll${q}`, { token, version: '2' });
    if (r.status !== 200) throw new Error(`poll ${r.status}: ${r.text}`);
    events.push(...r.body.events);
    if (events.length) after = events.at(-1).sequence;
    if (r.body.isTerminal && r.body.lastSequence === (events.at(-1)?.sequence ?? -1)) return { events, last: r.body };
  }
}

/** Long-polls a v2 run's events until its status is `status` (no sleeps). */
export async function waitForV2Status(url: string, eventsUrl: string, token: string, status: string): Promise<void> {
  let after: number | undefined;
  for (;;) {
    const q = `?timeout=5${after !== undefined ? `&afterSequence=${after}` : ''}`;
    const p = await call(url, 'GET', `${eventsUrl}/poll${q}`, { token, version: '2' });
    if (p.body.events.length) after = p.body.events.at(-1).sequence;
    if (p.body.status === status) return;
  }
}

/** Reads a v2 SSE stream until the server closes it; returns each frame's `id`, `event` and parsed `data`. */
export async function readV2Sse(
  url: string,
  token: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; contentType: string | null; frames: Array<{ id?: string; event?: string; data: any }> }> {
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'openwop-version': '2', ...headers },
  });
  const frames: Array<{ id?: string; event?: string; data: any }> = [];
  const text = await res.text();
  if (res.status !== 200) return { status: res.status, contentType: res.headers.get('content-type'), frames };
  for (const frame of text.split('\n\n')) {
    if (!frame || frame.startsWith(':')) continue;
    const id = /^id: (.*)$/m.exec(frame)?.[1];
    const event = /^event: (.*)$/m.exec(frame)?.[1];
    const data = /^data: (.*)$/m.exec(frame)?.[1];
    frames.push({
      ...(id !== undefined ? { id } : {}),
      ...(event !== undefined ? { event } : {}),
      data: data ? JSON.parse(data) : undefined,
    });
  }
  return { status: res.status, contentType: res.headers.get('content-type'), frames };
}
