// Guarantees (OpenWOP v2 persistence.md §"The era key", §"The writer rule", §"The v1 wire of an era-3 log"), over
// real HTTP against `mhs-host serve` on SQLite and, when MHS_TEST_PG_URL is set, PostgreSQL, with the stored rows read
// from the same database file or schema:
// - while the host serves major 2, every run it creates is era 3, whichever major's `POST` creates it (and a fork of
//   one): its v2 snapshot says `eventLogSchemaVersion: 3`, and its log is stored in v2 vocabulary (each stored type is
//   a v2 name, here the renamed `run.resume-started` a restart appends, never `run.resuming`);
// - the v2 discovery root advertises 3, the value written for new runs;
// - a v2 read shows the stored v2 names; a v1 read shows each stored type's v1 spelling through the same codemap row,
//   inverted (the v1 wire as it was before);
// - a run created while major 2 was not served keeps no era stamp: it reads as era 2 and later appends (the restart's
//   `run.resuming`) are still written in v1 vocabulary.
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb } from '../../../src/ledger/index.js';
import { fromOpaque } from '../../../src/openwop/v2/ids.js';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, codemap, pollToEnd, v2EventProblems, waitForV2Status } from './v2-kit.js';

const WF = {
  id: 'era-gate-then-noop',
  name: 'Era: gate then noop',
  version: '1.0',
  nodes: [
    {
      id: 'gate',
      typeId: 'core.approvalGate',
      name: 'Gate',
      position: { x: 0, y: 0 },
      config: { title: 'Hold', actions: ['accept', 'reject'] },
      inputs: {},
    },
    { id: 'after', typeId: 'core.noop', name: 'After', position: { x: 1, y: 0 }, config: {}, inputs: {} },
  ],
  edges: [{ id: 'e1', sourceNodeId: 'gate', targetNodeId: 'after' }],
  triggers: [{ id: 'manual', type: 'manual' }],
  variables: [],
  metadata: {},
  settings: {},
};

const V1_TO_V2 = codemap();
const V2_TO_V1 = new Map([...V1_TO_V2].map(([v1, v2]) => [v2, v1]));
const seg = (v2Id: string): string => encodeURIComponent(v2Id).replace(/%2F/gi, '~2F');

describe.each(BACKENDS)('era-3 event logs on $name', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let client: string;
  let operator: string;
  /** Engine ids: `pre` created with major 2 off, `viaV2` by the v2 POST /runs, `viaV1` by POST /v1/runs. */
  const ids = { pre: '', viaV2: '', viaV1: '' };

  const v2 = (method: string, path: string, body?: unknown, token = client) =>
    call(srv.url, method, path, { token, version: '2', ...(body !== undefined ? { body } : {}) });
  const v1 = (method: string, path: string, body?: unknown, token = client) =>
    call(srv.url, method, path, { token, ...(body !== undefined ? { body } : {}) });
  const v2Id = async (engineId: string): Promise<string> => (await v2('GET', `/runs/${engineId}`)).body.runId;

  async function storedTypes(runId: string): Promise<Array<{ sequence: number; type: string }>> {
    const db = await openDb(h.location);
    try {
      const rows = await db.all<{ sequence: number | string; type: string }>(
        'SELECT sequence, type FROM openwop_events WHERE run_id = ? ORDER BY sequence',
        [runId],
      );
      return rows.map((r) => ({ sequence: Number(r.sequence), type: r.type }));
    } finally {
      await db.close();
    }
  }
  async function untilWaiting(engineId: string): Promise<void> {
    await waitForV2Status(srv.url, `/runs/${seg(await v2Id(engineId))}/events`, client, 'waiting-approval');
  }

  beforeAll(async () => {
    h = await backend.fresh();
    client = await makeToken(h.location, 'client');
    operator = await makeToken(h.location, 'operator', 'op');
    // A run made by the host while it serves major 1 alone: a pre-cut run.
    srv = await serve(h.location, ['--no-openwop-v2']);
    expect((await v1('POST', '/v1/workflows', WF, operator)).status).toBe(201);
    ids.pre = (await v1('POST', '/v1/runs', { workflowId: WF.id })).body.runId;
    expect(await srv.stop()).toBe(0);

    srv = await serve(h.location);
    await untilWaiting(ids.pre);
    const a = await v2('POST', '/runs', { workflowId: WF.id });
    expect(a.status).toBe(201);
    ids.viaV2 = fromOpaque(a.body.runId.split('/')[1]);
    const b = await v1('POST', '/v1/runs', { workflowId: WF.id });
    expect(b.status).toBe(201);
    ids.viaV1 = b.body.runId;
    await untilWaiting(ids.viaV2);
    await untilWaiting(ids.viaV1);
    // A restart appends `run.resuming` (v2 `run.resume-started`, a renamed codemap row) to every open run.
    expect(await srv.stop()).toBe(0);
    srv = await serve(h.location);
    for (const id of Object.values(ids)) await untilWaiting(id);
  });
  afterAll(async () => {
    await srv?.stop();
    await h?.cleanup();
  });

  it('advertises era 3 on the v2 discovery root', async () => {
    const root = await call(srv.url, 'GET', '/.well-known/openwop', { version: '2' });
    expect(root.status).toBe(200);
    expect(root.body.eventLogSchemaVersion).toBe(3);
  });

  it('stamps era 3 on runs created by either major, and stores their logs in v2 vocabulary', async () => {
    for (const id of [ids.viaV2, ids.viaV1]) {
      const snap = await v2('GET', `/runs/${id}`);
      expect(snap.body.eventLogSchemaVersion).toBe(3);
      const rows = await storedTypes(id);
      const types = rows.map((r) => r.type);
      expect(types).toContain('run.resume-started');
      expect(types).not.toContain('run.resuming');
      for (const t of types) expect(V2_TO_V1.has(t), t).toBe(true);
    }
  });

  it('reads an era-3 log under v2 as stored and under v1 through the inverted codemap row', async () => {
    for (const id of [ids.viaV2, ids.viaV1]) {
      const rows = await storedTypes(id);
      const polled2 = (await v2('GET', `/runs/${seg(await v2Id(id))}/events/poll?timeout=1`)).body;
      const polled1 = (await v1('GET', `/v1/runs/${id}/events`)).body;
      expect(polled2.events.map((e: any) => [e.sequence, e.type])).toEqual(rows.map((r) => [r.sequence, r.type]));
      expect(polled1.events.map((e: any) => [e.sequence, e.type])).toEqual(
        rows.map((r) => [r.sequence, V2_TO_V1.get(r.type)]),
      );
      expect(polled1.events.map((e: any) => e.type)).toContain('run.resuming');
      for (const e of polled2.events) expect(v2EventProblems(e), e.type).toEqual([]);
    }
  });

  it('leaves a run created while major 2 was off in era 2, appending in v1 vocabulary', async () => {
    const snap = await v2('GET', `/runs/${ids.pre}`);
    expect(snap.body.eventLogSchemaVersion).toBe(2);
    const types = (await storedTypes(ids.pre)).map((r) => r.type);
    // Two restarts since: each appended `run.resuming` under its v1 name.
    expect(types.filter((t) => t === 'run.resuming').length).toBeGreaterThanOrEqual(2);
    expect(types).not.toContain('run.resume-started');
    for (const t of types) expect(V1_TO_V2.has(t), t).toBe(true);
    const polled2 = (await v2('GET', `/runs/${seg(await v2Id(ids.pre))}/events/poll?timeout=1`)).body;
    expect(polled2.events.map((e: any) => e.type)).toEqual(types.map((t) => V1_TO_V2.get(t)));
  });

  it('era-3 runs go on to complete, and a fork of one is era 3', async () => {
    for (const id of [ids.viaV2, ids.viaV1, ids.pre]) {
      const r = await v1('POST', `/v1/runs/${id}/interrupts/gate`, { resumeValue: { action: 'accept' } }, operator);
      expect(r.status).toBeLessThan(300);
      const { last } = await pollToEnd(srv.url, `/runs/${seg(await v2Id(id))}/events`, client);
      expect(last.status).toBe('completed');
    }
    const types = (await storedTypes(ids.viaV2)).map((r) => r.type);
    expect(types).toContain('run.completed');
    for (const t of types) expect(V2_TO_V1.has(t), t).toBe(true);
    for (const source of [ids.viaV2, ids.pre]) {
      const fork = await v2('POST', `/runs/${seg(await v2Id(source))}:fork`, { mode: 'replay' });
      expect(fork.status).toBe(201);
      await pollToEnd(srv.url, fork.body.eventsUrl, client);
      expect((await v2('GET', `/runs/${seg(fork.body.runId)}`)).body.eventLogSchemaVersion).toBe(3);
    }
  });
});
