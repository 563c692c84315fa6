// Guarantees (OpenWOP v2 events.md §The events channel, §SSE frames), over real HTTP against `mhs-host serve` on
// SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL, under OpenWOP-Version 2: `GET /runs/{runId}/events` is a
// text/event-stream whose frames carry `id:` = sequence, `event:` = the v2 type and `data:` = the v2 RunEventDoc;
// `debug` carries the whole log (the same events as the poll), the default `updates` only the transitions the mode
// table names; `Last-Event-ID` resumes at the next sequence; the stream closes after the terminal event, live too;
// a `streamMode` outside the pattern or not served is 400 unsupported_stream_mode, checked before anything else.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updatesTier } from '../../helpers/stream-modes.js';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, readV2Sse, v2EventProblems, v2Problems, waitForV2Status } from './v2-kit.js';

describe.each(BACKENDS)('v2 event stream on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let token: string;
  let done: { eventsUrl: string; events: any[] };

  beforeAll(async () => {
    h = await backend.fresh();
    token = await makeToken(h.location, 'operator');
    srv = await serve(h.location, ['--openwop-v2']);
    const created = await call(srv.url, 'POST', '/runs', {
      token,
      version: '2',
      body: { workflowId: 'conformance-noop' },
    });
    const { events } = await pollToEnd(srv.url, created.body.eventsUrl, token);
    done = { eventsUrl: created.body.eventsUrl, events };
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('debug: every event of the log, the same as the poll, then the stream ends', async () => {
    const s = await readV2Sse(`${srv.url}${done.eventsUrl}?streamMode=debug`, token);
    expect(s.status).toBe(200);
    expect(s.contentType).toMatch(/^text\/event-stream/);
    expect(s.frames.map((f) => f.data)).toEqual(done.events);
    for (const f of s.frames) {
      expect(f.id).toBe(String(f.data.sequence));
      expect(f.event).toBe(f.data.type);
      expect(v2EventProblems(f.data)).toEqual([]);
    }
  });

  it('updates (the default): run transitions and terminal node transitions, no node.started, in log order', async () => {
    const s = await readV2Sse(`${srv.url}${done.eventsUrl}`, token);
    const types = s.frames.map((f) => f.data.type);
    expect(types[0]).toBe('run.started');
    expect(types.at(-1)).toBe('run.completed');
    expect(types).not.toContain('node.started');
    expect(s.frames.map((f) => f.data)).toEqual(done.events.filter((e) => updatesTier(e.type)));
  });

  it('Last-Event-ID resumes at the next sequence and does not repeat the resumption point', async () => {
    const at = done.events[1].sequence;
    const s = await readV2Sse(`${srv.url}${done.eventsUrl}?streamMode=debug`, token, { 'last-event-id': String(at) });
    expect(s.frames[0]!.data.sequence).toBe(at + 1);
    expect(s.frames.map((f) => f.data)).toEqual(done.events.filter((e) => e.sequence > at));
  });

  it('a combined mode names the admitting mode in event:', async () => {
    const s = await readV2Sse(`${srv.url}${done.eventsUrl}?streamMode=updates,debug`, token);
    expect(s.frames.map((f) => f.data)).toEqual(done.events);
    for (const f of s.frames) expect(['updates', 'debug']).toContain(f.event);
  });

  it('a mode outside the pattern or not served is 400 unsupported_stream_mode, before the run is looked up', async () => {
    for (const mode of ['bogus', 'values,updates', 'updates,values', 'updates,']) {
      for (const path of [done.eventsUrl, '/runs/local~2Frun-01ARZ3NDEKTSV4RRFFQ69G5FAV/events']) {
        const r = await call(srv.url, 'GET', `${path}?streamMode=${encodeURIComponent(mode)}`, {
          token,
          version: '2',
          headers: { accept: 'text/event-stream' },
        });
        expect([r.status, r.body.error], `${mode} ${path}`).toEqual([400, 'unsupported_stream_mode']);
        expect(r.body.details.supported).toEqual(expect.arrayContaining(['updates', 'values', 'messages', 'debug']));
        expect(v2Problems('error-envelope', r.body)).toEqual([]);
      }
    }
  });

  it('live: a stream opened on a waiting run receives the rest and closes after the terminal event', async () => {
    const created = await call(srv.url, 'POST', '/runs', {
      token,
      version: '2',
      body: { workflowId: 'conformance-approval' },
    });
    // Wait until the gate is suspended (the poll long-polls; no sleeps).
    await waitForV2Status(srv.url, created.body.eventsUrl, token, 'waiting-approval');
    const streaming = readV2Sse(`${srv.url}${created.body.eventsUrl}?streamMode=debug`, token);
    const bare = created.body.runId.split('/')[1].replace('-', '_');
    const resolved = await call(srv.url, 'POST', `/v1/runs/${bare}/interrupts/gate`, {
      token,
      body: { action: 'accept' },
    });
    expect(resolved.status).toBe(200);
    const s = await streaming;
    const types = s.frames.map((f) => f.data.type);
    expect(types).toContain('interrupt.resolved');
    expect(types.at(-1)).toBe('run.completed');
    const seqs = s.frames.map((f) => f.data.sequence);
    expect(seqs).toEqual(seqs.map((_, i) => i));
  });
});
