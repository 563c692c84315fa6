// Guarantees (OpenWOP v2 events.md §The events channel, §SSE frames), over real HTTP against `mhs-host serve` on
// SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL, under OpenWOP-Version 2:
// - `values` sends one `state.snapshot` frame after each transition of the `updates` tier, `id:` that event's
//   sequence, `data:` the run as it stood at that point of its log (status, node states, pending interrupts), the
//   last one the run as `GET /runs/{runId}` shows it; a resumption starts with the snapshot at the resumption point;
// - `bufferMs` (1..5000; 0 is none) gathers the events into `batch` frames (`data:` an array of RunEventDoc, `id:` its highest sequence),
//   flushed on the terminal event and on `node.suspended`, which lose and repeat nothing and resume after their id;
// - `messages` combines with the others; `bufferMs` out of range, or beside `values`, is 400 validation_error.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updatesTier } from '../../helpers/stream-modes.js';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, readV2Sse, v2EventProblems, v2Problems, waitForV2Status } from './v2-kit.js';

const TERMINAL_NODE = new Set(['node.completed', 'node.failed', 'node.skipped', 'node.cancelled']);

describe.each(BACKENDS)('v2 stream modes on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  /** A completed three-node run (a → b → c) and one that waited for an approval. */
  let multi: { eventsUrl: string; statusUrl: string; events: any[] };
  let gated: { eventsUrl: string; events: any[] };

  async function finished(workflowId: string): Promise<{ eventsUrl: string; statusUrl: string; events: any[] }> {
    const created = await call(srv.url, 'POST', '/runs', { token, version: '2', body: { workflowId } });
    expect(created.status).toBe(201);
    const { events } = await pollToEnd(srv.url, created.body.eventsUrl, token);
    return { eventsUrl: created.body.eventsUrl, statusUrl: created.body.statusUrl, events };
  }

  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'operator');
    srv = await serve(h.location, ['--openwop-v2']);
    multi = await finished('conformance-multi-node');
    const created = await call(srv.url, 'POST', '/runs', {
      token,
      version: '2',
      body: { workflowId: 'conformance-approval' },
    });
    await waitForV2Status(srv.url, created.body.eventsUrl, token, 'waiting-approval');
    const bare = created.body.runId.split('/')[1].replace('-', '_');
    const resolved = await call(srv.url, 'POST', `/v1/runs/${bare}/interrupts/gate`, {
      token,
      body: { action: 'accept' },
    });
    expect(resolved.status).toBe(200);
    gated = {
      eventsUrl: created.body.eventsUrl,
      events: (await pollToEnd(srv.url, created.body.eventsUrl, token)).events,
    };
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('values: one state.snapshot per updates-tier event, each the run as its log stood there, the last as GET shows it', async () => {
    const s = await readV2Sse(`${srv.url}${multi.eventsUrl}?streamMode=values`, token);
    expect(s.status).toBe(200);
    const triggers = multi.events.filter((e) => updatesTier(e.type));
    expect(s.frames.map((f) => f.id)).toEqual(triggers.map((e) => String(e.sequence)));
    for (const f of s.frames) {
      expect(f.event).toBe('state.snapshot');
      const at = Number(f.id);
      const upTo = multi.events.filter((e) => e.sequence <= at);
      for (const node of ['a', 'b', 'c']) {
        const ended = upTo.filter((e) => e.nodeId === node && TERMINAL_NODE.has(e.type)).at(-1);
        const started = upTo.some((e) => e.nodeId === node && e.type === 'node.started');
        const want = ended ? ended.type.slice('node.'.length) : started ? 'running' : 'pending';
        expect(f.data.nodeStates[node].status, `node ${node} at ${at}`).toBe(want);
      }
      const terminal = upTo.find((e) => ['run.completed', 'run.failed', 'run.cancelled'].includes(e.type));
      expect(f.data.status, `status at ${at}`).toBe(terminal ? terminal.type.slice('run.'.length) : 'running');
      expect(f.data.extensions['mhs-host.run'].lastSequence).toBe(at);
    }
    const got = await call(srv.url, 'GET', multi.statusUrl, { token, version: '2' });
    expect(got.status).toBe(200);
    expect(s.frames.at(-1)!.data).toEqual(got.body);
  });

  it('values: the waiting run shows waiting-approval with its interrupt pending, then completed with none', async () => {
    const s = await readV2Sse(`${srv.url}${gated.eventsUrl}?streamMode=values`, token);
    const requested = gated.events.find((e) => e.type === 'interrupt.requested');
    const resolved = gated.events.find((e) => e.type === 'interrupt.resolved');
    const atRequest = s.frames.find((f) => Number(f.id) === requested.sequence)!;
    expect(atRequest.data.status).toBe('waiting-approval');
    expect(atRequest.data.extensions['mhs-host.run'].pendingInterrupts.map((p: any) => p.nodeId)).toEqual(['gate']);
    const atResolve = s.frames.find((f) => Number(f.id) === resolved.sequence)!;
    expect(atResolve.data.extensions['mhs-host.run'].pendingInterrupts).toEqual([]);
    expect(s.frames.at(-1)!.data.status).toBe('completed');
  });

  it('values: a resumption starts with the snapshot at the resumption point, then continues after it', async () => {
    const full = await readV2Sse(`${srv.url}${multi.eventsUrl}?streamMode=values`, token);
    // Resume at an event that is not an updates-tier trigger too: the first frame is still a snapshot there.
    const at = multi.events.find((e) => e.type === 'node.started' && e.nodeId === 'b').sequence;
    const s = await readV2Sse(`${srv.url}${multi.eventsUrl}?streamMode=values`, token, { 'last-event-id': String(at) });
    expect(s.frames[0]!.event).toBe('state.snapshot');
    expect(s.frames[0]!.id).toBe(String(at));
    expect(s.frames[0]!.data.nodeStates.b.status).toBe('running');
    expect(s.frames.slice(1)).toEqual(full.frames.filter((f) => Number(f.id) > at));
  });

  it('bufferMs: batch frames carry the whole log once, in order, each id its highest sequence; resume after one', async () => {
    const s = await readV2Sse(`${srv.url}${gated.eventsUrl}?streamMode=debug&bufferMs=5000`, token);
    expect(s.status).toBe(200);
    expect(s.frames.length).toBeGreaterThan(0);
    for (const f of s.frames) {
      expect(f.event).toBe('batch');
      expect(Array.isArray(f.data) && f.data.length > 0).toBe(true);
      expect(f.id).toBe(String(f.data.at(-1).sequence));
      for (const e of f.data) expect(v2EventProblems(e)).toEqual([]);
    }
    expect(s.frames.flatMap((f) => f.data)).toEqual(gated.events);
    // A 5 s window on a finished log: only a suspension or the terminal event closes a batch.
    for (const f of s.frames) expect(['node.suspended', 'run.completed']).toContain(f.data.at(-1).type);
    expect(s.frames.some((f) => f.data.at(-1).type === 'node.suspended')).toBe(true);
    const first = s.frames[0]!.id!;
    const resumed = await readV2Sse(`${srv.url}${gated.eventsUrl}?streamMode=debug&bufferMs=5000`, token, {
      'last-event-id': first,
    });
    expect(resumed.frames.flatMap((f) => f.data)).toEqual(gated.events.filter((e) => e.sequence > Number(first)));
  });

  it('bufferMs: updates filtered into batches are the updates stream; bufferMs=0 is no batching', async () => {
    const plain = await readV2Sse(`${srv.url}${multi.eventsUrl}`, token);
    const s = await readV2Sse(`${srv.url}${multi.eventsUrl}?bufferMs=1`, token);
    expect(s.frames.every((f) => f.event === 'batch')).toBe(true);
    expect(s.frames.flatMap((f) => f.data)).toEqual(plain.frames.map((f) => f.data));
    const zero = await readV2Sse(`${srv.url}${multi.eventsUrl}?bufferMs=0`, token);
    expect(zero.frames).toEqual(plain.frames);
  });

  it('messages combines with updates and the stream still ends after the terminal event', async () => {
    const s = await readV2Sse(`${srv.url}${multi.eventsUrl}?streamMode=updates,messages`, token);
    expect(s.status).toBe(200);
    expect(s.frames.at(-1)!.data.type).toBe('run.completed');
    // No node of this workflow streams model output, so every frame is an updates-tier event.
    expect(s.frames.map((f) => f.data)).toEqual(multi.events.filter((e) => updatesTier(e.type)));
  });

  it('every mode is listed as served; bufferMs out of range or beside values is 400 validation_error', async () => {
    const probe = await call(srv.url, 'GET', `${multi.eventsUrl}?streamMode=bogus`, { token, version: '2' });
    expect(probe.status).toBe(400);
    expect([...probe.body.details.supported].sort()).toEqual(['debug', 'messages', 'updates', 'values']);
    for (const q of ['bufferMs=5001', 'bufferMs=-1', 'bufferMs=1.5', 'bufferMs=x', 'streamMode=values&bufferMs=10']) {
      const r = await call(srv.url, 'GET', `${multi.eventsUrl}?${q}`, {
        token,
        version: '2',
        headers: { accept: 'text/event-stream' },
      });
      expect([r.status, r.body.error], q).toEqual([400, 'validation_error']);
      expect(v2Problems('error-envelope', r.body)).toEqual([]);
    }
  });
});
