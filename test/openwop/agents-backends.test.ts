// Guarantees: the supervisor → dispatch → harvest loop and its restart behave the same on every store backend
// (SQLite always, PostgreSQL when MHS_TEST_PG_URL is set): the handoff fixture records its four causation-chained
// core.workflowChain.event records with a valid log, and a dispatch stopped while its child waits resumes on the
// same store location without a second child or a duplicate record.
import { afterEach, describe, expect, it } from 'vitest';
import { openDb } from '../../src/ledger/index.js';
import { agentsFamily } from '../../src/openwop/agents/agents-family.js';
import { createOpenwopHost } from '../../src/openwop/host.js';
import type { OpenwopHost } from '../../src/openwop/host.js';
import type { WorkflowDefinition } from '../../src/openwop/types.js';
import { BACKENDS } from '../ledger/helpers.js';
import { clock, expectValidEvents, ofType, untilStatus } from './agents-harness.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function openOn(location: string): Promise<{ host: OpenwopHost; close: () => Promise<void> }> {
  const db = await openDb(location);
  const host = await createOpenwopHost({ db, clock, workflowsDir: false, families: [agentsFamily()] });
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await host.close();
    await db.close();
  };
  cleanups.push(close);
  return { host, close };
}

const child: WorkflowDefinition = {
  id: 'agents-backend-child',
  name: 'gated child',
  version: '1',
  nodes: [{ id: 'gate', typeId: 'core.approvalGate', name: 'gate', position: { x: 0, y: 0 }, config: {}, inputs: {} }],
  edges: [],
  triggers: [{ id: 'manual', type: 'manual' }],
  variables: [{ name: 'childOutcome', type: 'string', defaultValue: 'kept' }],
  metadata: {},
  settings: {},
};

const parent: WorkflowDefinition = {
  id: 'agents-backend-parent',
  name: 'parent',
  version: '1',
  nodes: [
    {
      id: 'supervisor',
      typeId: 'core.orchestrator.supervisor',
      name: 's',
      position: { x: 0, y: 0 },
      config: { mockDispatchPlan: [{ kind: 'next-worker', nextWorkerIds: [child.id] }] },
      inputs: {},
    },
    {
      id: 'dispatch',
      typeId: 'core.dispatch',
      name: 'd',
      position: { x: 1, y: 0 },
      config: { outputMapping: { parentResult: 'childOutcome' } },
      inputs: {},
    },
  ],
  edges: [
    { id: 'e1', sourceNodeId: 'supervisor', targetNodeId: 'dispatch' },
    { id: 'e2', sourceNodeId: 'dispatch', targetNodeId: 'supervisor' },
  ],
  triggers: [{ id: 'manual', type: 'manual' }],
  variables: [{ name: 'parentResult', type: 'string', defaultValue: '' }],
  metadata: {},
  settings: {},
};

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
    await first.host.catalog.register(child);
    await first.host.catalog.register(parent);
    const { run } = await first.host.runs.createRun({ workflowId: parent.id }, { principal: 't' });
    let childId: string | undefined;
    for (let i = 0; !childId && i < 5000; i++) {
      childId = (await first.host.store.childRuns(run.runId)).find((c) => c.status === 'waiting-approval')?.runId;
      if (!childId) await new Promise<void>((res) => setImmediate(res));
    }
    expect(childId).toBeDefined();
    await first.close();

    const second = await openOn(h.location);
    await untilStatus(second.host, childId!, 'waiting-approval');
    await second.host.runs.resolveInterrupt(childId!, 'gate', { action: 'accept' }, { principal: 'operator' });
    expect(await second.host.runs.waitTerminal(run.runId)).toBe('completed');
    const events = await second.host.store.events(run.runId);
    expectValidEvents(events);
    expect(ofType(events, CHAIN).map((e) => e.payload.phase)).toEqual(FULL);
    expect((await second.host.store.childRuns(run.runId)).map((c) => c.runId)).toEqual([childId]);
    expect((await second.host.runs.snapshot(run.runId)).variables.parentResult).toBe('kept');
  });
});
