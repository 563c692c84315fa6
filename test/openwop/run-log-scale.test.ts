// Guarantees (issue 21 item 5): run-log appends of different runs made while a commit is in flight share the next
// transaction (one fsync), each released only once its own commit is durable, and an append the store refuses fails
// alone; the events of one scheduling step (a node's terminal event and the starts it causes) commit together, and a
// node executes only once its `node.started` is in the store; a run whose log is longer than 10,000 events resumes
// from all of it and its snapshot shows all of it (no silent cap); a long poll that has events also takes those of the
// run's appends already in flight, and nothing before it is durable. Real SQLite files (with the WAL fsync held where
// the test needs it), and PostgreSQL when MHS_TEST_PG_URL is set.
import { EventEmitter } from 'node:events';
import { fsync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDb } from '../../src/ledger/index.js';
import { createOpenwopHost } from '../../src/openwop/host.js';
import type { OpenwopHost } from '../../src/openwop/host.js';
import type { NodeModule } from '../../src/openwop/node-registry.js';
import { buildSnapshot } from '../../src/openwop/snapshot.js';
import { SnapshotCache } from '../../src/openwop/snapshot-cache.js';
import { OpenwopStore } from '../../src/openwop/store.js';
import { longPollEvents } from '../../src/server/long-poll.js';
import type { RunEventInput, WorkflowDefinition } from '../../src/openwop/types.js';
import { BACKENDS, PG_URL, postgresBackend } from '../ledger/helpers.js';
import { clock, freshDb, oneNode, workflowNode } from './service-test-kit.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A WAL fsync that, while held, waits for `release()` (the real fsync runs then); `stop()` ends the hold. */
function heldFsync() {
  const waiting: Array<() => void> = [];
  let held = false;
  let calls = 0;
  return {
    get calls() {
      return calls;
    },
    hold: () => void (held = true),
    release: () => waiting.splice(0).forEach((r) => r()),
    stop: () => {
      held = false;
      waiting.splice(0).forEach((r) => r());
    },
    fn: (fd: number) => {
      calls++;
      return new Promise<void>((resolve, reject) => {
        const run = () => fsync(fd, (err) => (err ? reject(err) : resolve()));
        if (held) waiting.push(run);
        else run();
      });
    },
  };
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 1));
};

const log = (message: string): RunEventInput => ({ type: 'log.appended', payload: { level: 'info', message } });

function chain(id: string, typeIds: string[]): WorkflowDefinition {
  const nodes = typeIds.map((typeId, i) => workflowNode({ id: `n${i}`, name: `n${i}`, typeId }));
  return {
    ...oneNode(id, { typeId: 'core.noop' }),
    nodes,
    edges: nodes.slice(1).map((n, i) => ({ id: `e${i}`, sourceNodeId: `n${i}`, targetNodeId: n.id })),
  };
}

describe('run-log group commit (SQLite, FULL)', () => {
  it('appends of runs arriving during a commit share the next one; each resolves only when durable; a refusal fails alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mhs-group-'));
    const held = heldFsync();
    const db = await openDb(join(dir, 'host.db'), { sqlite: { synchronous: 'FULL', fsync: held.fn } });
    cleanups.push(async () => {
      held.stop();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const store = new OpenwopStore(db, clock);
    await store.init();
    const def = oneNode('g', { typeId: 'core.noop' });
    const runs = [];
    for (let i = 0; i < 6; i++)
      runs.push((await store.createRun({ workflow: def, inputs: {}, variables: {} })).run.runId);
    const ended = runs.pop()!;
    await store.append(ended, [{ type: 'run.completed', payload: {} }], { status: 'completed' });
    const before = { ...store.appends.stats };
    const syncs = held.calls;

    held.hold();
    const resolved = new Set<number>();
    const first = store.append(runs[0]!, [log('first')]).then(() => resolved.add(0));
    await turns(3); // the first commit is in its fsync
    const rest = runs
      .slice(1)
      .map((runId, i) => store.append(runId, [log('a'), log('b')]).then(() => resolved.add(i + 1)));
    const refused = store.append(ended, [log('late')]).catch((e: { code: string }) => {
      resolved.add(-1);
      return e.code;
    });
    await turns(5);
    expect(resolved.size).toBe(0); // nothing is released before its commit is durable
    expect(held.calls).toBe(syncs + 1);

    held.release();
    await first;
    await turns(3);
    // The others went into one commit, waiting in its fsync.
    expect(resolved.size).toBe(1);
    expect(held.calls).toBe(syncs + 2);
    // Released until every append is in (one release per fsync asked for).
    while (resolved.size < runs.length + 1) {
      held.release();
      await turns(1);
    }
    await Promise.all(rest);
    expect(await refused).toBe('conflict');
    expect(held.calls).toBe(syncs + 2);
    expect(store.appends.stats.commits - before.commits).toBe(2);
    expect(store.appends.stats.appends - before.appends).toBe(6);
    for (const runId of runs.slice(1))
      expect((await store.events(runId)).map((e) => [e.sequence, e.payload.message])).toEqual([
        [0, 'a'],
        [1, 'b'],
      ]);
    expect((await store.events(ended)).map((e) => e.type)).toEqual(['run.completed']);
  });
});

// PostgreSQL: reads do not wait for a write in flight there (on SQLite they wait for the file lock), so the poll
// reads the committed events while the next append is still blocked, here on the run row's lock held by the test.
describe.skipIf(!PG_URL)('a long poll takes the appends in flight (PostgreSQL)', () => {
  it("answers with the run's committed events and those of its append in flight, once that one commits", async () => {
    const h = await postgresBackend.fresh();
    const db = await openDb(h.location);
    const other = await openDb(h.location);
    cleanups.push(async () => {
      await other.close();
      await db.close();
      await h.cleanup();
    });
    const store = new OpenwopStore(db, clock);
    await store.init();
    const def = oneNode('p', { typeId: 'core.noop' });
    const { run } = await store.createRun({ workflow: def, inputs: {}, variables: {} });
    await store.append(run.runId, [log('a')]);
    expect(store.appendsInFlight(run.runId)).toBeUndefined();
    const host = { store } as unknown as OpenwopHost;
    const raw = new EventEmitter() as unknown as IncomingMessage;

    let unlock!: () => void;
    const locked = new Promise<void>((r) => (unlock = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    const lock = other.tx(async (t) => {
      await t.get('SELECT last_seq FROM openwop_runs WHERE run_id = ? FOR UPDATE', [run.runId]);
      holding();
      await locked;
    });
    await held;
    const b = store.append(run.runId, [log('b')]);
    const inFlight = store.appendsInFlight(run.runId);
    expect(inFlight).toBeDefined();
    // timeout=0 answers at once with what is committed.
    const now = await longPollEvents(host, clock, { runId: run.runId, after: -1, waitMs: 0, raw });
    expect(now.map((e) => e.payload.message)).toEqual(['a']);
    let answered: unknown[] | undefined;
    const poll = longPollEvents(host, clock, { runId: run.runId, after: -1, waitMs: 10_000, raw }).then(
      (events) => (answered = events.map((e) => e.payload.message)),
    );
    await turns(20);
    expect(answered).toBeUndefined(); // it has 'a' and waits for 'b', blocked on the row lock
    unlock();
    await lock;
    await b;
    await poll;
    expect(answered).toEqual(['a', 'b']);
    expect(store.appendsInFlight(run.runId)).toBeUndefined();
  });
});

describe('one scheduling step, one transaction', () => {
  it("commits a node's terminal event with the next start; the node runs only once its start is stored", async () => {
    const ref: { host?: OpenwopHost } = {};
    const seen: boolean[] = [];
    const probe: NodeModule = {
      typeId: 'test.started-probe',
      async execute(ctx) {
        const events = await ref.host!.store.events(ctx.runId);
        seen.push(events.some((e) => e.type === 'node.started' && e.nodeId === ctx.node.id));
        return { outputs: {} };
      },
    };
    const db = await openDb(join(mkdtempSync(join(tmpdir(), 'mhs-step-')), 'host.db'));
    const host = await createOpenwopHost({ db, clock, workflowsDir: false, nodes: [probe] });
    ref.host = host;
    cleanups.push(async () => {
      await host.close();
      await db.close();
    });
    await host.catalog.register(chain('steps', ['core.noop', 'test.started-probe', 'core.noop']));
    const before = { ...host.store.appends.stats };
    const { run } = await host.runs.createRun({ workflowId: 'steps' }, { principal: 't' });
    expect(await host.runs.waitTerminal(run.runId)).toBe('completed');
    const events = await host.store.events(run.runId);
    expect(events.map((e) => `${e.type}${e.nodeId ? ` ${e.nodeId}` : ''}`)).toEqual([
      'run.started',
      'node.started n0',
      'node.completed n0',
      'node.started n1',
      'node.completed n1',
      'node.started n2',
      'node.completed n2',
      'run.completed',
    ]);
    // The run's row (group-committed too), then run.started + start n0 | n0 done + start n1 | n1 done + start n2 |
    // n2 done + run.completed.
    expect(host.store.appends.stats.appends - before.appends).toBe(5);
    expect(seen).toEqual([true]);
    // Each start names the completion that caused it, drawn in the same step.
    expect(events[3]!.causationId).toBe(events[2]!.eventId);
    expect(events[5]!.causationId).toBe(events[4]!.eventId);
  });
});

describe.each(BACKENDS)('a run log longer than 10,000 events on $name', (backend) => {
  it('resumes from all of it and its snapshot shows all of it', async () => {
    const db = await freshDb(backend, cleanups);
    const store = new OpenwopStore(db, clock);
    const def = chain('long', ['core.noop', 'core.noop']);
    const { run } = await store.createRun({ workflow: def, inputs: {}, variables: {} });
    await store.append(run.runId, [{ type: 'run.started', payload: { workflowId: 'long' } }], { status: 'running' });
    await store.append(run.runId, [
      { type: 'node.started', nodeId: 'n0', payload: { nodeId: 'n0', typeId: 'core.noop', attempt: 0 } },
    ]);
    // Snapshots read while the log grows: each applies only the new events, and ends as a fold of the whole log.
    const snapshots = new SnapshotCache(store);
    for (let page = 0; page < 11; page++) {
      await store.append(
        run.runId,
        Array.from({ length: 1_000 }, (_, i) => ({ ...log(`m${page * 1_000 + i}`), nodeId: 'n0' })),
      );
      if (page % 4 === 0) await snapshots.snapshot((await store.getRun(run.runId))!);
    }
    await store.append(run.runId, [
      { type: 'node.completed', nodeId: 'n0', payload: { nodeId: 'n0', outputs: { late: true } } },
    ]);
    const all = await store.events(run.runId);
    expect(all.length).toBe(11_003);
    const row = (await store.getRun(run.runId))!;
    expect(await snapshots.snapshot(row)).toEqual(buildSnapshot(row, all));
    expect(buildSnapshot(row, all)).toMatchObject({
      lastSequence: 11_002,
      nodeStates: { n0: { status: 'completed' } },
    });

    // A host starting on this store resumes the run: n0 completed after event 10,000, so only n1 runs.
    const host = await createOpenwopHost({ db, clock, workflowsDir: false });
    cleanups.unshift(() => host.close());
    expect(await host.runs.waitTerminal(run.runId)).toBe('completed');
    const events = await host.store.events(run.runId);
    expect(events.filter((e) => e.type === 'node.started').map((e) => e.nodeId)).toEqual(['n0', 'n1']);
    const snap = await host.runs.snapshot(run.runId);
    expect(snap.lastSequence).toBe(events.at(-1)!.sequence);
    expect(snap.lastSequence).toBeGreaterThan(11_000);
    expect(snap.nodeStates.n0).toMatchObject({ status: 'completed', executions: 1, outputs: { late: true } });
    expect(snap.nodeStates.n1).toMatchObject({ status: 'completed', executions: 1 });
    // Read again with nothing new: the same projection.
    expect(await host.runs.snapshot(run.runId)).toEqual(snap);
  }, 120_000); // 11,000 appended events: slow on a loaded machine, no timing asserted
});
