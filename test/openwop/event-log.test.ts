// Guarantees (issue 7 §3): the run event log on the shared Db — SQLite always, PostgreSQL when
// MHS_TEST_PG_URL is set — assigns sequences from 0 atomically (concurrent appenders leave no gap or
// duplicate), refuses events that do not match run-event.schema.json / run-event-payloads.schema.json,
// refuses anything after the terminal event, and is append-only in the database (UPDATE/DELETE refused).
// A full run (fixture) executes on each backend with a valid log.
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../../src/ledger/index.js';
import { createOpenwopHost } from '../../src/openwop/host.js';
import { OpenwopStore } from '../../src/openwop/store.js';
import { BACKENDS } from '../ledger/helpers.js';
import type { Backend } from '../ledger/helpers.js';
import { logProblems } from '../server/serve-helpers.js';
import { clock, freshDb, oneNode } from './service-test-kit.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const def = oneNode('log-test', { id: 'a', name: 'a', typeId: 'core.noop' }, { name: 'log test', triggers: [] });
const open = (backend: Backend): Promise<Db> => freshDb(backend, cleanups);

describe.each(BACKENDS)('event log on $name', (backend) => {
  it('assigns gap-free sequences from 0 under 16 concurrent appenders', async () => {
    const store = new OpenwopStore(await open(backend), clock);
    const { run } = await store.createRun({ workflow: def, inputs: {}, variables: {} });
    await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        store.append(run.runId, [{ type: 'log.appended', payload: { level: 'info', message: `m${i}` } }]),
      ),
    );
    const events = await store.events(run.runId);
    expect(events.map((e) => e.sequence)).toEqual(Array.from({ length: 16 }, (_, i) => i));
    expect(new Set(events.map((e) => e.eventId)).size).toBe(16);
    expect((await store.getRun(run.runId))!.lastSequence).toBe(15);
  });

  it('refuses schema-invalid events and anything after the terminal event; nothing is half-written', async () => {
    const store = new OpenwopStore(await open(backend), clock);
    const { run } = await store.createRun({ workflow: def, inputs: {}, variables: {} });
    await store.append(run.runId, [{ type: 'run.started', payload: { workflowId: 'log-test' } }]);
    const bad = await store
      .append(run.runId, [
        { type: 'log.appended', payload: { level: 'info', message: 'ok' } },
        { type: 'node.started', payload: { nodeId: 'a' } },
      ])
      .catch((e: { code: string; details: { errors: unknown[] } }) => e);
    expect(bad).toMatchObject({ code: 'MHS.HOST.INTERNAL' });
    expect((await store.events(run.runId)).length).toBe(1);
    await store.append(run.runId, [{ type: 'run.completed', payload: {} }], { status: 'completed' });
    const after = await store
      .append(run.runId, [{ type: 'log.appended', payload: { level: 'info', message: 'late' } }])
      .catch((e: { code: string }) => e);
    expect(after).toMatchObject({ code: 'conflict' });
    expect((await store.events(run.runId)).map((e) => e.type)).toEqual(['run.started', 'run.completed']);
  });

  it('is append-only in the database', async () => {
    const db = await open(backend);
    const store = new OpenwopStore(db, clock);
    const { run } = await store.createRun({ workflow: def, inputs: {}, variables: {} });
    await store.append(run.runId, [{ type: 'run.started', payload: { workflowId: 'log-test' } }]);
    await expect(
      db.run(`UPDATE openwop_events SET type = 'run.failed' WHERE run_id = ?`, [run.runId]),
    ).rejects.toThrow();
    await expect(db.run('DELETE FROM openwop_events WHERE run_id = ?', [run.runId])).rejects.toThrow();
    expect((await store.events(run.runId))[0]!.type).toBe('run.started');
  });

  it('runs the sub-workflow fixtures with valid logs', async () => {
    const host = await createOpenwopHost({ db: await open(backend), clock, workflowsDir: false });
    cleanups.unshift(() => host.close());
    const { run } = await host.runs.createRun({ workflowId: 'conformance-subworkflow-parent' }, { principal: 't' });
    expect(await host.runs.waitTerminal(run.runId)).toBe('completed');
    expect(logProblems(await host.store.events(run.runId))).toEqual([]);
    const snap = await host.runs.snapshot(run.runId);
    const child = await host.runs.snapshot(
      (snap.nodeStates['subwf-call']!.outputs as { childRunId: string }).childRunId,
    );
    expect(child).toMatchObject({ status: 'completed', parentRunId: run.runId, parentNodeId: 'subwf-call' });
  });
});
