// Helpers for HTTP tests against a real `mhs-host serve` child process on a real store.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies of HTTP responses are read loosely in assertions */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RealClock } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import { createTokenStore } from '../../src/policy/tokens.js';
import type { TokenRole } from '../../src/policy/tokens.js';
import { openwopSchemas } from '../../src/openwop/schemas.js';
import type { RunEvent } from '../../src/openwop/types.js';
import { cliEntry } from '../helpers/cli-entry.js';

export const ROOT = join(import.meta.dirname, '../..');

/** A fresh SQLite file path in a temp dir. */
export function tempDb(): string {
  return join(mkdtempSync(join(tmpdir(), 'mhs-openwop-')), 'host.db');
}

/** Creates a bearer token of `role` in the store at `location`. */
export async function makeToken(location: string, role: TokenRole = 'client', name = `t-${role}`): Promise<string> {
  const db = await openDb(location);
  try {
    return (await createTokenStore(db, new RealClock()).add(name, role)).token;
  } finally {
    await db.close();
  }
}

export interface Served {
  url: string;
  child: ChildProcess;
  output: () => string;
  /** SIGTERM and wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
}

/** Spawns `mhs-host serve --port 0 --db <location>` and waits for its URL line. */
export function serve(location: string, extra: string[] = [], env: Record<string, string> = {}): Promise<Served> {
  const entry = cliEntry();
  const child = spawn(entry.command, [...entry.args, 'serve', '--port', '0', '--db', location, ...extra], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const onData = (b: Buffer): void => {
      out += b.toString();
      const m = /serving (http:\/\/\S+)/.exec(out);
      if (m) {
        child.stdout!.off('data', onData);
        child.stdout!.on('data', (x: Buffer) => (out += x.toString()));
        resolve({
          url: m[1]!,
          child,
          output: () => out,
          stop: async () => {
            child.kill('SIGTERM');
            return exited;
          },
          kill: async () => {
            child.kill('SIGKILL');
            await exited;
          },
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    void exited.then((code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
}

/** A small JSON client with a bearer token. */
export function client(url: string, token: string) {
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(url + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      body: (text ? JSON.parse(text) : undefined) as Record<string, any>,
    };
  };
  return {
    call,
    get: (path: string, headers?: Record<string, string>) => call('GET', path, undefined, headers),
    post: (path: string, body?: unknown, headers?: Record<string, string>) => call('POST', path, body, headers),
    /** Polls the snapshot until `pred` holds (each poll a long-poll on the event log: no sleeps). */
    async until(runId: string, pred: (snap: Record<string, any>) => boolean): Promise<Record<string, any>> {
      let after = -1;
      for (;;) {
        const snap = (await call('GET', `/v1/runs/${runId}`)).body;
        if (pred(snap)) return snap;
        const p = await call(
          'GET',
          `/v1/runs/${runId}/events/poll?afterSequence=${Math.max(after, snap.lastSequence)}&timeout=5000`,
        );
        after = p.body.lastSequence;
      }
    },
    async events(runId: string): Promise<RunEvent[]> {
      return (await call('GET', `/v1/runs/${runId}/events`)).body.events as RunEvent[];
    },
  };
}

/**
 * Reads an SSE response until it ends (or `max` events arrived); returns the parsed frames: `events` their `data:`
 * (a run event, except for the stream modes' synthesized frames), `ids` and `names` their `id:` and `event:`.
 */
export async function readSse(
  url: string,
  token: string,
  headers: Record<string, string> = {},
  max = Infinity,
): Promise<{ events: RunEvent[]; ids: string[]; names: string[]; comments: number; status: number }> {
  const ctl = new AbortController();
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers },
    signal: ctl.signal,
  });
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  const events: RunEvent[] = [];
  const ids: string[] = [];
  const names: string[] = [];
  let comments = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (frame.startsWith(':')) {
          comments++;
          continue;
        }
        const id = /^id: (.*)$/m.exec(frame)?.[1];
        const name = /^event: (.*)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (id !== undefined) ids.push(id);
        if (name !== undefined) names.push(name);
        if (data) events.push(JSON.parse(data) as RunEvent);
      }
      if (events.length >= max) break;
    }
  } finally {
    ctl.abort();
  }
  return { events, ids, names, comments, status: res.status };
}

/** Asserts the log invariants: sequences 0..n-1 in order, exactly one terminal event and it is last, every event valid. */
export function logProblems(events: RunEvent[]): string[] {
  const problems: string[] = [];
  events.forEach((e, i) => {
    if (e.sequence !== i) problems.push(`sequence ${e.sequence} at index ${i}`);
    for (const issue of openwopSchemas().checkEvent(e))
      problems.push(`${e.type}#${e.sequence} ${issue.path} ${issue.message}`);
  });
  const terminals = events.filter((e) => ['run.completed', 'run.failed', 'run.cancelled'].includes(e.type));
  if (terminals.length !== 1) problems.push(`${terminals.length} terminal events`);
  if (terminals.length && events[events.length - 1] !== terminals[0]) problems.push('terminal event is not last');
  return problems;
}
