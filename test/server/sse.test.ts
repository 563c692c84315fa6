// Guarantees (issue 7 §4): an SSE stream of a waiting run sends keep-alive comments while nothing
// happens, then delivers the new events and closes after the terminal event; the app is served by a real
// Fastify listener over a real SQLite file.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/index.js';
import { createOpenwopHost } from '../../src/openwop/host.js';
import type { OpenwopHost } from '../../src/openwop/host.js';
import type { RunEvent } from '../../src/openwop/types.js';
import { createTokenStore } from '../../src/policy/tokens.js';
import { buildApp } from '../../src/server/app.js';

const clock = new RealClock();
let db: Db;
let host: OpenwopHost;
let app: Awaited<ReturnType<typeof buildApp>>['app'];
let url: string;
let token: string;

beforeAll(async () => {
  db = await openDb(join(mkdtempSync(join(tmpdir(), 'mhs-sse-')), 'host.db'));
  host = await createOpenwopHost({ db, clock, workflowsDir: false });
  const tokens = createTokenStore(db, clock);
  token = (await tokens.add('sse', 'client')).token;
  ({ app } = await buildApp({ host, auth: tokens, clock, sseKeepAliveMs: 20 }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});

afterAll(async () => {
  app.server.closeAllConnections();
  await app.close();
  await host.close();
  await db.close();
});

it('keep-alive comments flow while the run waits; events follow; the stream ends after the terminal event', async () => {
  const { run } = await host.runs.createRun({ workflowId: 'conformance-approval' }, { principal: 't' });
  const res = await fetch(`${url}/v1/runs/${run.runId}/events?streamMode=debug`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
  });
  expect(res.headers.get('content-type')).toBe('text/event-stream');
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  let keepAlives = 0;
  let resolved = false;
  const events: RunEvent[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (frame === ': keep-alive') keepAlives++;
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (data) events.push(JSON.parse(data) as RunEvent);
    }
    if (!resolved && keepAlives >= 2 && events.some((e) => e.type === 'interrupt.requested')) {
      resolved = true;
      await host.runs.resolveInterrupt(run.runId, 'gate', { action: 'accept' }, { principal: 't' });
    }
  }
  expect(keepAlives).toBeGreaterThanOrEqual(2);
  expect(events).toEqual(await host.store.events(run.runId));
  expect(events.at(-1)!.type).toBe('run.completed');
});
