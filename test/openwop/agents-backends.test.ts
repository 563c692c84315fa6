// Guarantees: the supervisor → dispatch → harvest loop and its restart behave the same on every store backend
// (SQLite always, PostgreSQL when MHS_TEST_PG_URL is set): the handoff fixture records its four causation-chained
// core.workflowChain.event records with a valid log, and a dispatch stopped while its child waits resumes on the
// same store location without a second child or a duplicate record.
import { afterEach, describe, expect, it } from 'vitest';
import { BACKENDS } from '../ledger/helpers.js';
import {
  acceptGateAndFinish,
  expectValidEvents,
  gatedWorker,
  harvestingLoop,
  ofType,
  openAgentsHost,
  startUntilWorkerHolds,
} from './agents-harness.js';
import type { Opened } from './agents-harness.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** An agents host on `location`, closed after the test (before its store is removed) unless closed before. */
async function openOn(location: string): Promise<Opened> {
  const o = await openAgentsHost(location);
  cleanups.push(() => o.close());
  return o;
}

const child = gatedWorker('agents-backend-child', 'kept');
const parent = harvestingLoop('agents-backend-parent', child.id, 'parent');

const CHAIN = 'core.workflowChain.event';
const FULL = ['dispatch.began', 'dispatch.succeeded', 'child.completed', 'output.harvested'];

describe.each(BACKENDS)('agents loop on $name', (backend) => {
  it('conformance-multi-agent-handoff records the four chained transitions', async () => {
    const h = await backend.fresh();
    cleanups.push(h.cleanup);
    const { host } = await openOn(h.location);
    const { run } = await host.runs.createRun({ workflowId: 'conformance-multi-agent-handoff' }, { principal: 't' });
    expect(await host.runs.waitTerminal(run.runId)).toBe('completed');
    const events = await host.store.events(run.runId);
    expectValidEvents(events);
    const chain = ofType(events, CHAIN);
    expect(chain.map((e) => e.payload.phase)).toEqual(FULL);
    chain.slice(1).forEach((e, i) => expect(e.causationId).toBe(chain[i]!.eventId));
  });

  it('a dispatch stopped while its child waits resumes on the same store without duplicates', async () => {
    const h = await backend.fresh();
    cleanups.push(h.cleanup);
    const first = await openOn(h.location);
    const { runId, childId } = await startUntilWorkerHolds(first.host, child, parent, 5000);
    expect(childId).toBeDefined();
    await first.close();

    const second = await openOn(h.location);
    const { status, events } = await acceptGateAndFinish(second.host, runId, childId!);
    expect(status).toBe('completed');
    expectValidEvents(events);
    expect(ofType(events, CHAIN).map((e) => e.payload.phase)).toEqual(FULL);
    expect((await second.host.store.childRuns(runId)).map((c) => c.runId)).toEqual([childId]);
    expect((await second.host.runs.snapshot(runId)).variables.parentResult).toBe('kept');
  });
});
