// Guarantees (replay determinism, RFC 0037 "the loop MUST be re-entrant"): a host stopped mid-run (host.close())
// and reopened on the same SQLite file resumes the run from its event log without deciding again or repeating
// an event. (1) A supervisor held behind its CP-1 approval keeps the decision it recorded before the stop, even
// when the definition's plan is changed while the host is down, and emits agent.decided / node.suspended once;
// an agent-pinned node held the same way emits its agent events once.
// (2) A dispatch stopped while its worker's child run waits resumes the same child (never started twice), and
// the handoff chain continues across the restart without duplicates: exactly dispatch.began → dispatch.succeeded
// → child.completed → output.harvested, the post-restart records caused by the pre-restart ones. (3) A crash
// between creating the child and recording dispatch.succeeded (simulated by removing that last record from the
// file) resumes in `dispatching`: the same child is found again by its key and dispatch.succeeded is recorded once.
import { describe, expect, it } from 'vitest';
import { openDb } from '../../src/ledger/index.js';
import type { RunEvent, WorkflowDefinition } from '../../src/openwop/types.js';
import {
  acceptGateAndFinish,
  expectValidEvents,
  gatedWorker,
  harvestingLoop,
  ofType,
  openAgentsHost,
  startUntil,
  startUntilWorkerHolds,
  untilStatus,
} from './agents-harness.js';
import type { Opened } from './agents-harness.js';
import { closedAfterEach } from './service-test-kit.js';

const open = closedAfterEach<Opened>();

/** Opens an agents host on `file` (a new temp file by default), closed after the test unless closed before. */
async function openTracked(file?: string): Promise<Opened> {
  const o = await openAgentsHost(file);
  open.push(o);
  return o;
}

const CHAIN = 'core.workflowChain.event';
const count = (events: readonly RunEvent[], type: string, nodeId?: string): number =>
  events.filter((e) => e.type === type && (nodeId === undefined || e.nodeId === nodeId)).length;

const gatedChild = gatedWorker('agents-gated-child', 'after-restart', { title: 'hold the worker' });
const parent = harvestingLoop('agents-restart-parent', gatedChild.id, 'restart parent');

/** Opens a host, starts the parent and waits until its worker holds on the gate; the host, run and child. */
async function parentWithWaitingChild(): Promise<{ first: Opened; runId: string; childId: string | undefined }> {
  const first = await openTracked();
  return { first, ...(await startUntilWorkerHolds(first.host, gatedChild, parent)) };
}

/** Opens a host, starts `workflowId`, waits until it holds on its approval and stops the host; its store and run. */
async function heldThenStopped(workflowId: string): Promise<{ file: string; runId: string; before: RunEvent[] }> {
  const first = await openTracked();
  const { runId, events: before } = await startUntil(first.host, workflowId, 'waiting-approval');
  await first.close();
  return { file: first.file, runId, before };
}

/**
 * Reopens a host on `file`, accepts the held worker's gate and checks that the parent completed with a valid log
 * and the four-phase handoff chain; the host, the parent's events and its chain.
 */
async function resumeToFullChain(
  file: string,
  runId: string,
  childId: string,
): Promise<{ second: Opened; events: RunEvent[]; chain: RunEvent[] }> {
  const second = await openTracked(file);
  const { status, events } = await acceptGateAndFinish(second.host, runId, childId);
  expect(status).toBe('completed');
  expectValidEvents(events);
  const chain = ofType(events, CHAIN);
  expect(chain.map((e) => e.payload.phase)).toEqual([
    'dispatch.began',
    'dispatch.succeeded',
    'child.completed',
    'output.harvested',
  ]);
  return { second, events, chain };
}

describe('restart mid-run (replay determinism)', () => {
  it('a supervisor held on CP-1 keeps its recorded decision across a restart, even if the plan changed', async () => {
    const { file, runId, before } = await heldThenStopped('conformance-orchestrator-low-confidence');

    // While the host is down, change the stored run's plan: a host that re-decided would now pick terminate.
    const raw = await openDb(file);
    const row = (await raw.get<{ definition: string }>('SELECT definition FROM openwop_runs WHERE run_id = ?', [
      runId,
    ]))!;
    const def = JSON.parse(row.definition) as WorkflowDefinition;
    def.nodes[0]!.config.mockPendingDecision = { kind: 'terminate', reason: 'changed-while-down' };
    await raw.run('UPDATE openwop_runs SET definition = ? WHERE run_id = ?', [JSON.stringify(def), runId]);
    await raw.close();

    const second = await openTracked(file);
    const resumed = await untilStatus(second.host, runId, 'waiting-approval');
    expect(second.host.runs.pendingInterrupts().map((p) => [p.runId, p.nodeId])).toEqual([[runId, 'supervisor']]);
    expect(resumed.slice(0, before.length)).toEqual(before);
    expect(count(resumed, 'run.resuming')).toBe(1);
    await second.host.runs.resolveInterrupt(runId, 'supervisor', { action: 'accept' }, { principal: 'operator' });
    expect(await second.host.runs.waitTerminal(runId)).toBe('completed');
    const events = await second.host.store.events(runId);
    expectValidEvents(events);
    // The first turn's decision is the one recorded before the stop; the node was not started again.
    const decided = ofType(events, 'runOrchestrator.decided');
    expect(decided[0]!.payload.decision).toEqual({ kind: 'next-worker', nextWorkerIds: ['conformance-noop'] });
    expect(count(events, 'node.suspended')).toBe(1);
    expect(count(events, 'interrupt.requested')).toBe(1);
    const firstTurn = events.filter((e) => e.nodeId === 'supervisor' && e.sequence < decided[0]!.sequence);
    expect(count(firstTurn, 'agent.decided')).toBe(1);
    expect(count(firstTurn, 'log.appended')).toBe(1);
    expect(count(firstTurn, 'node.started')).toBe(1);
    expect((await second.host.store.childRuns(runId)).map((c) => c.workflowId)).toEqual(['conformance-noop']);
  });

  it('an agent-pinned node held on CP-1 resumes after a restart without re-emitting its agent events', async () => {
    const { file, runId: held, before } = await heldThenStopped('conformance-agent-low-confidence');

    const second = await openTracked(file);
    await untilStatus(second.host, held, 'waiting-approval');
    await second.host.runs.resolveInterrupt(held, 'low-conf-decider', { action: 'accept' }, { principal: 'operator' });
    expect(await second.host.runs.waitTerminal(held)).toBe('completed');
    const events = await second.host.store.events(held);
    expectValidEvents(events);
    expect(events.slice(0, before.length)).toEqual(before);
    for (const t of ['agent.decided', 'log.appended', 'node.suspended', 'interrupt.requested', 'node.started'])
      expect(count(events, t)).toBe(1);
  });

  it('a dispatch stopped while its child waits resumes the same child; the handoff chain has no duplicates', async () => {
    const { first, runId, childId } = await parentWithWaitingChild();
    expect(childId).toBeDefined();
    const before = await first.host.store.events(runId);
    expect(ofType(before, CHAIN).map((e) => e.payload.phase)).toEqual(['dispatch.began', 'dispatch.succeeded']);
    await first.close();

    const { second, events, chain } = await resumeToFullChain(first.file, runId, childId!);
    expect(chain.slice(0, 2)).toEqual(ofType(before, CHAIN));
    expect(chain[2]!.causationId).toBe(chain[1]!.eventId);
    expect(chain[3]!.causationId).toBe(chain[2]!.eventId);
    expect((await second.host.store.childRuns(runId)).map((c) => c.runId)).toEqual([childId]);
    expect(ofType(events, 'runOrchestrator.decided').map((e) => (e.payload.decision as { kind: string }).kind)).toEqual(
      ['next-worker', 'terminate'],
    );
    expect(count(events, 'node.started', 'dispatch')).toBe(2);
    expect((await second.host.runs.snapshot(runId)).variables.parentResult).toBe('after-restart');
  });

  it('a crash between creating the child and recording dispatch.succeeded finds the same child again', async () => {
    const { first, runId, childId } = await parentWithWaitingChild();
    const before = await first.host.store.events(runId);
    const last = before.at(-1)!;
    expect([last.type, last.payload.phase]).toEqual([CHAIN, 'dispatch.succeeded']);
    await first.close();

    // Undo the last append, as if the process died before it committed (the table is append-only: lift the
    // delete trigger for this one statement, then put it back).
    const raw = await openDb(first.file);
    const trig = (
      await raw.all<{ name: string; sql: string }>(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'openwop_events' AND sql LIKE '%DELETE%'",
      )
    )[0]!;
    await raw.exec(`DROP TRIGGER ${trig.name}`);
    await raw.run('DELETE FROM openwop_events WHERE run_id = ? AND sequence = ?', [runId, last.sequence]);
    await raw.run('UPDATE openwop_runs SET last_seq = ? WHERE run_id = ?', [last.sequence - 1, runId]);
    await raw.exec(trig.sql);
    await raw.close();

    const { second, chain } = await resumeToFullChain(first.file, runId, childId!);
    expect(chain[1]!.payload.childRunId).toBe(childId);
    expect(chain[1]!.causationId).toBe(chain[0]!.eventId);
    expect((await second.host.store.childRuns(runId)).map((c) => c.runId)).toEqual([childId]);
  });
});
