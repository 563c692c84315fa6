// Guarantees (issue 19), on a real PostgreSQL store shared by two host processes (two pools, two listen connections;
// skipped without MHS_TEST_PG_URL): an append by one process reaches the other's subscribers of that run, in order
// and once each, through `NOTIFY`; a process ignores its own notifications (its subscribers had the events locally).
// When the listen connection is lost the relay reports MHS.HOST.LEDGER_UNAVAILABLE, reopens it after its backoff and
// the subscribers then receive the events appended while no connection listened.
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, HostError, SimulatedClock } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import type { Db, PgListener, PostgresDb } from '../../src/ledger/index.js';
import { RunEventRelay } from '../../src/openwop/run-event-relay.js';
import type { Listen } from '../../src/openwop/run-event-relay.js';
import { OpenwopStore } from '../../src/openwop/store.js';
import type { RunEvent, WorkflowDefinition } from '../../src/openwop/types.js';
import { PG_URL, postgresBackend } from './helpers.js';
import type { StoreHandle } from './helpers.js';

const WF = {
  id: 'relay-wf',
  name: 'relay',
  version: '1',
  nodes: [{ id: 'n', typeId: 'core.noop', name: 'n', position: { x: 0, y: 0 }, config: {}, inputs: {} }],
  edges: [],
  triggers: [{ id: 'manual', type: 'manual' }],
  variables: [],
  metadata: {},
  settings: {},
} as unknown as WorkflowDefinition;
const log = (message: string) => ({ type: 'log.appended', payload: { level: 'info', message } });

/** The events of `runId` that reach `store`'s subscribers; `done` once there are `n`. */
function eventsUntil(store: OpenwopStore, runId: string, n: number): { got: RunEvent[]; done: Promise<void> } {
  const got: RunEvent[] = [];
  let resolve!: () => void;
  const done = new Promise<void>((r) => (resolve = r));
  const off = store.subscribe(runId, (e) => {
    got.push(e);
    if (got.length >= n) {
      off();
      resolve();
    }
  });
  return { got, done };
}

describe.skipIf(!PG_URL)('run events relayed across processes by LISTEN/NOTIFY', () => {
  const handles: StoreHandle[] = [];
  const dbs: Db[] = [];
  const relays: RunEventRelay[] = [];
  afterEach(async () => {
    for (const r of relays.splice(0)) await r.close();
    for (const d of dbs.splice(0)) await d.close().catch(() => undefined);
    for (const h of handles.splice(0)) await h.cleanup();
  });

  async function proc(location: string, origin: string, clock: SimulatedClock, listen?: (db: PostgresDb) => Listen) {
    const db = (await openDb(location)) as PostgresDb;
    dbs.push(db);
    const store = new OpenwopStore(db, clock);
    const errors: HostError[] = [];
    const relay = new RunEventRelay(store, listen ? listen(db) : db.listen.bind(db), clock, {
      origin,
      onError: (e) => errors.push(e),
    });
    relays.push(relay);
    store.notifier = relay;
    await store.init();
    await relay.start();
    return { store, relay, errors };
  }

  it('an append by one process reaches the other process’s subscribers, in order, once each', async () => {
    const h = await postgresBackend.fresh();
    handles.push(h);
    const clock = new SimulatedClock(1_000_000);
    const a = await proc(h.location, 'a', clock);
    const b = await proc(h.location, 'b', clock);
    const runId = (await a.store.createRun({ workflow: WF, inputs: {}, variables: {} })).run.runId;
    const onB = eventsUntil(b.store, runId, 3);
    const onA: RunEvent[] = [];
    a.store.subscribe(runId, (e) => onA.push(e));
    await a.store.append(runId, [log('one'), log('two')]);
    await a.store.append(runId, [log('three')]);
    await onB.done;
    const stored = await b.store.events(runId);
    expect(onB.got.map((e) => e.eventId)).toEqual(stored.map((e) => e.eventId));
    // A's own subscriber had each event once, locally (its own notifications are ignored).
    expect(onA.map((e) => e.eventId)).toEqual(stored.map((e) => e.eventId));
  }, 30_000);

  it('a lost listen connection is reported, reopened after the backoff, and the missed events are delivered', async () => {
    const h = await postgresBackend.fresh();
    handles.push(h);
    const clock = new SimulatedClock(1_000_000);
    const a = await proc(h.location, 'a', clock);
    let current: { real: PgListener; lose: (err: Error) => void } | undefined;
    let opened = 0;
    let reopened!: () => void;
    const second = new Promise<void>((r) => (reopened = r));
    // The real connection, whose loss the test decides: it then closes it, so nothing arrives on it.
    const lossy =
      (db: PostgresDb): Listen =>
      async (channel, onNotify) => {
        const real = await db.listen(channel, onNotify);
        let lose!: (err: Error) => void;
        const lost = new Promise<Error>((r) => (lose = r));
        current = { real, lose };
        if (++opened === 2) reopened();
        return { ended: Promise.race([real.ended, lost]), close: () => real.close() };
      };
    const b = await proc(h.location, 'b', clock, lossy);
    const runId = (await a.store.createRun({ workflow: WF, inputs: {}, variables: {} })).run.runId;
    const onB = eventsUntil(b.store, runId, 2);
    await a.store.append(runId, [log('before')]);
    while (onB.got.length < 1) await new Promise((r) => setImmediate(r));
    current!.lose(new Error('connection terminated'));
    await current!.real.close();
    while (b.errors.length < 1) await new Promise((r) => setImmediate(r));
    expect(b.errors.map((e) => e.code)).toEqual([ErrorCode.HOST_LEDGER_UNAVAILABLE]);
    await a.store.append(runId, [log('while lost')]);
    clock.advance(60_000);
    await second;
    await onB.done;
    const stored = await b.store.events(runId);
    expect(onB.got.map((e) => e.eventId)).toEqual(stored.map((e) => e.eventId));
    expect(b.errors.every((e) => e instanceof HostError)).toBe(true);
  }, 30_000);
});
