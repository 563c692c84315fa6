// Guarantees (RFC 0006 / 0007 / 0022 / 0037 / 0039 §A, spec multi-agent-execution.md): on a real host (SQLite file)
// with the agents family, the supervisor ⇄ dispatch loop runs the conformance fixtures end to end: each turn
// records one runOrchestrator.decided; terminate completes the run with no later decision; next-worker runs each
// worker as a child run whose handoff emits core.workflowChain.event records in causation-chained order
// (dispatch.began caused by the decision → dispatch.succeeded → child.completed → output.harvested only with a
// non-empty outputMapping); failed / cancelled / uncreatable children are recorded and never harvested; input
// and output mappings (with per-worker overrides) are the handoff channel between sequential workers (the real
// RFC 0022 fixtures: an unset parent variable arrives neither as the child's default nor as null); a supervisor
// below the CP-1 threshold holds its decision behind an approval; a decision below the 0.5 floor is escalated
// (confidence-escalated, then a clarification) before any dispatch; the child carries the parent's causation
// and trace. The discovery document advertises the families and still validates. Every event validates.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trace } from '@opentelemetry/api';
import { openDb } from '../../src/ledger/index.js';
import { createOpenwopHost } from '../../src/openwop/host.js';
import type { OpenwopHost } from '../../src/openwop/host.js';
import { openwopSchemas, schemaId } from '../../src/openwop/schemas.js';
import { contextFrom } from '../../src/openwop/tracing.js';
import type { RunEvent } from '../../src/openwop/types.js';
import {
  clock,
  closeHost,
  expectValidEvents,
  harvestingLoop,
  ofType,
  openAgentsHost,
  runToEnd,
  start,
  startUntil,
  supervisorLoop,
  tempDbFile,
  untilChild,
  untilStatus,
} from './agents-harness.js';
import type { Opened } from './agents-harness.js';

let o: Opened;
let host: OpenwopHost;

beforeAll(async () => {
  o = await openAgentsHost();
  host = o.host;
});

afterAll(async () => {
  await closeHost(o);
});

const CHAIN = 'core.workflowChain.event';
const phases = (events: readonly RunEvent[]): string[] => ofType(events, CHAIN).map((e) => e.payload.phase as string);

/** Each chain event is caused by the prior one of its worker; the first by a runOrchestrator.decided. */
function expectCausationChain(events: readonly RunEvent[]): void {
  const chain = ofType(events, CHAIN);
  const byId = new Map(events.map((e) => [e.eventId, e]));
  for (const [i, e] of chain.entries()) {
    const cause = byId.get(e.causationId ?? '');
    if (e.payload.phase === 'dispatch.began') expect(cause?.type).toBe('runOrchestrator.decided');
    else expect(cause?.eventId).toBe(chain[i - 1]!.eventId);
  }
}

describe('capabilities (advertise only what works)', () => {
  it('advertises agents and multiAgent.executionModel v2, validates, and lists the agent fixtures', async () => {
    const doc = host.capabilities() as Record<string, Record<string, unknown> | undefined>;
    expect(openwopSchemas().check(schemaId('capabilities'), doc)).toEqual([]);
    expect(doc.agents).toMatchObject({ supported: true, orchestrator: true, dispatch: true, dispatchMapping: true });
    expect(doc.multiAgent).toEqual({
      executionModel: {
        supported: true,
        version: 2,
        confidenceEscalationInterruptKind: 'clarification',
      },
    });
    expect(doc.fixtures).toEqual(
      expect.arrayContaining([
        'conformance-agent-reasoning',
        'conformance-orchestrator-dispatch',
        'conformance-multi-agent-handoff',
        'conformance-multi-agent-confidence-escalation',
      ]),
    );
  });

  it('a host without the family lists none of the agent-pinned or orchestrator fixtures', async () => {
    const db = await openDb(tempDbFile());
    const plain = await createOpenwopHost({ db, clock, workflowsDir: false });
    const doc = plain.capabilities() as Record<string, unknown>;
    expect(doc.agents).toBeUndefined();
    expect(doc.multiAgent).toBeUndefined();
    const agentic = [
      'conformance-agent-reasoning',
      'conformance-agent-low-confidence',
      'conformance-orchestrator-dispatch',
      'conformance-multi-agent-handoff',
      'conformance-dispatch-loop',
    ];
    expect((doc.fixtures as string[]).filter((f) => agentic.includes(f))).toEqual([]);
    await plain.close();
    await db.close();
  });
});

describe('supervisor → dispatch → harvest loop', () => {
  it('CO-3 conformance-orchestrator-terminate: completes with one terminate decision and no dispatch', async () => {
    const r = await runToEnd(host, 'conformance-orchestrator-terminate');
    expect(r.status).toBe('completed');
    expectValidEvents(r.events);
    const decided = ofType(r.events, 'runOrchestrator.decided');
    expect(decided.map((e) => e.payload)).toEqual([
      { agentId: 'core.conformance.terminate-supervisor', decision: { kind: 'terminate', reason: 'goal-reached' } },
    ]);
    expect(ofType(r.events, CHAIN)).toEqual([]);
    expect(await host.store.childRuns(r.runId)).toEqual([]);
  });

  it('conformance-orchestrator-dispatch: next-worker runs the child run, then terminate', async () => {
    const r = await runToEnd(host, 'conformance-orchestrator-dispatch');
    expect(r.status).toBe('completed');
    expectValidEvents(r.events);
    expect(ofType(r.events, 'runOrchestrator.decided').map((e) => e.payload.decision)).toEqual([
      { kind: 'next-worker', nextWorkerIds: ['conformance-noop'] },
      { kind: 'terminate', reason: 'goal-reached' },
    ]);
    const children = await host.store.childRuns(r.runId);
    expect(children.map((c) => [c.workflowId, c.status, c.parentNodeId])).toEqual([
      ['conformance-noop', 'completed', 'dispatch'],
    ]);
    expect(phases(r.events)).toEqual(['dispatch.began', 'dispatch.succeeded', 'child.completed']);
    expectCausationChain(r.events);
  });

  it('conformance-multi-agent-handoff: 4 chained transitions, harvest of childOutcome into parentResult', async () => {
    const r = await runToEnd(host, 'conformance-multi-agent-handoff');
    expect(r.status).toBe('completed');
    expectValidEvents(r.events);
    expect(phases(r.events)).toEqual(['dispatch.began', 'dispatch.succeeded', 'child.completed', 'output.harvested']);
    expectCausationChain(r.events);
    const chain = ofType(r.events, CHAIN);
    const [child] = await host.store.childRuns(r.runId);
    expect(chain.map((e) => e.payload.childRunId)).toEqual([undefined, child!.runId, child!.runId, child!.runId]);
    expect(
      chain.every(
        (e) => e.payload.parentRunId === r.runId && e.payload.workerId === 'conformance-multi-agent-handoff-child',
      ),
    ).toBe(true);
    expect(chain[3]!.payload.harvestedKeys).toEqual(['parentResult']);
    expect((await host.runs.snapshot(r.runId)).variables.parentResult).toBe('handoff-complete');
  });

  it('conformance-dispatch-loop: a supervisor without a plan or model dispatches one worker, then terminates', async () => {
    const r = await runToEnd(host, 'conformance-dispatch-loop');
    expect(r.status).toBe('completed');
    expectValidEvents(r.events);
    expect(ofType(r.events, 'runOrchestrator.decided').map((e) => e.payload.decision)).toEqual([
      { kind: 'next-worker', nextWorkerIds: ['conformance-noop'] },
      { kind: 'terminate', reason: 'goal-reached' },
    ]);
    const children = await host.store.childRuns(r.runId);
    expect(children.map((c) => [c.workflowId, c.status])).toEqual([['conformance-noop', 'completed']]);
    expect(ofType(r.events, 'node.dispatched').map((e) => e.payload)).toEqual([
      { childRunId: children[0]!.runId, childWorkflowId: 'conformance-noop', childStatus: 'completed' },
    ]);
  });

  it('CP-1 conformance-orchestrator-low-confidence: holds the decision behind an approval, then dispatches', async () => {
    const runId = await start(host, 'conformance-orchestrator-low-confidence');
    const held = await untilStatus(host, runId, 'waiting-approval');
    expectValidEvents(held);
    expect(ofType(held, 'runOrchestrator.decided')).toEqual([]);
    expect(ofType(held, 'node.suspended')[0]!.payload).toMatchObject({
      nodeId: 'supervisor',
      reason: 'low-confidence',
      observed: 0.5,
    });
    await host.runs.resolveInterrupt(runId, 'supervisor', { action: 'accept' }, { principal: 'operator' });
    expect(await host.runs.waitTerminal(runId)).toBe('completed');
    const events = await host.store.events(runId);
    expectValidEvents(events);
    const decided = ofType(events, 'runOrchestrator.decided');
    expect(decided.map((e) => (e.payload.decision as { kind: string }).kind)).toEqual(['next-worker', 'terminate']);
    // The ratified decision is caused by the approval's resolution.
    expect(events.find((e) => e.eventId === decided[0]!.causationId)?.type).toBe('interrupt.resolved');
    expect((await host.store.childRuns(runId)).map((c) => c.workflowId)).toEqual(['conformance-noop']);
  });

  it('RFC 0039 §A conformance-multi-agent-confidence-escalation: escalates before any dispatch; confirm dispatches', async () => {
    const runId = await start(host, 'conformance-multi-agent-confidence-escalation');
    const held = await untilStatus(host, runId, 'waiting-input');
    expectValidEvents(held);
    const esc = ofType(held, 'core.workflowChain.confidence-escalated');
    expect(esc).toHaveLength(1);
    expect(esc[0]!.payload).toMatchObject({
      confidence: 0.3,
      floor: 0.5,
      escalationKind: 'clarify',
      workerId: 'conformance-multi-agent-handoff-child',
      parentRunId: runId,
    });
    expect(ofType(held, CHAIN)).toEqual([]);
    expect(ofType(held, 'interrupt.requested')[0]!.payload.kind).toBe('clarification');
    expect(ofType(held, 'interrupt.requested')[0]!.sequence).toBeGreaterThan(esc[0]!.sequence);
    await host.runs.resolveInterrupt(runId, 'dispatch', { resumeValue: { confirm: true } }, { principal: 'operator' });
    expect(await host.runs.waitTerminal(runId)).toBe('completed');
    const events = await host.store.events(runId);
    expectValidEvents(events);
    expect(phases(events)).toEqual(['dispatch.began', 'dispatch.succeeded', 'child.completed']);
    const began = ofType(events, CHAIN)[0]!;
    expect(began.sequence).toBeGreaterThan(esc[0]!.sequence);
  });

  it('RFC 0039 §A: answering confirm=false drops the decision; nothing is dispatched', async () => {
    await host.catalog.register(
      supervisorLoop('agents-escalate-drop', [
        { kind: 'next-worker', nextWorkerIds: ['conformance-noop'], confidence: 0.2 },
      ]),
    );
    const { runId } = await startUntil(host, 'agents-escalate-drop', 'waiting-input');
    await host.runs.resolveInterrupt(runId, 'dispatch', { resumeValue: { confirm: false } }, { principal: 'operator' });
    expect(await host.runs.waitTerminal(runId)).toBe('completed');
    const events = await host.store.events(runId);
    expect(ofType(events, CHAIN)).toEqual([]);
    expect(await host.store.childRuns(runId)).toEqual([]);
  });
});

describe('dispatch mappings (RFC 0022)', () => {
  it('HVMAP-1c conformance-dispatch-per-worker-override: per-worker inputMapping overrides the default', async () => {
    const r = await runToEnd(host, 'conformance-dispatch-per-worker-override');
    expect(r.status).toBe('completed');
    expectValidEvents(r.events);
    const children = await host.store.childRuns(r.runId);
    const byWf = Object.fromEntries(children.map((c) => [c.workflowId, c]));
    expect(byWf['conformance-dispatch-cross-worker-handoff-child-a']!.inputs).toEqual({ input: 'default-x-value' });
    expect(byWf['conformance-dispatch-cross-worker-handoff-child-b']!.inputs).toEqual({ input: 'shared-value' });
    // Sequential: two workers, each with its own chain of three transitions.
    expect(phases(r.events)).toEqual([
      'dispatch.began',
      'dispatch.succeeded',
      'child.completed',
      'dispatch.began',
      'dispatch.succeeded',
      'child.completed',
    ]);
    expectCausationChain(r.events);
  });

  it('RFC 0022 §D: the parent variable bag is the handoff channel between sequential workers', async () => {
    await host.catalog.register(
      supervisorLoop(
        'agents-cross-worker',
        [
          {
            kind: 'next-worker',
            nextWorkerIds: [
              'conformance-dispatch-cross-worker-handoff-child-a',
              'conformance-dispatch-cross-worker-handoff-child-b',
            ],
          },
        ],
        {
          perWorkerOutputMappings: { 'conformance-dispatch-cross-worker-handoff-child-a': { sharedVar: 'output' } },
          perWorkerInputMappings: { 'conformance-dispatch-cross-worker-handoff-child-b': { input: 'sharedVar' } },
        },
        [{ name: 'sharedVar', type: 'string', defaultValue: '' }],
      ),
    );
    const r = await runToEnd(host, 'agents-cross-worker');
    expect(r.status).toBe('completed');
    expectValidEvents(r.events);
    const b = (await host.store.childRuns(r.runId)).find((c) => c.workflowId.endsWith('child-b'))!;
    expect(b.inputs).toEqual({ input: 'hello' });
    expect((await host.runs.snapshot(r.runId)).variables.sharedVar).toBe('hello');
    expect(phases(r.events)).toEqual([
      'dispatch.began',
      'dispatch.succeeded',
      'child.completed',
      'output.harvested',
      'dispatch.began',
      'dispatch.succeeded',
      'child.completed',
    ]);
  });

  it('HVMAP-1a-null conformance-dispatch-input-mapping-no-default: an unset parent variable arrives undefined', async () => {
    const r = await runToEnd(host, 'conformance-dispatch-input-mapping-no-default');
    expect(r.status).toBe('completed');
    const [child] = await host.store.childRuns(r.runId);
    expect(child!.inputs).toEqual({});
    expect('childGreeting' in child!.inputs).toBe(false);
  });

  it('RFC 0022 §A conformance-dispatch-output-mapping-child: a completed child is harvested through outputMapping', async () => {
    // The fixture child seeds childOutcome only through its variable's defaultValue ('done').
    await host.catalog.register(harvestingLoop('agents-harvest-fixture', 'conformance-dispatch-output-mapping-child'));
    const r = await runToEnd(host, 'agents-harvest-fixture');
    expect(r.status).toBe('completed');
    expectValidEvents(r.events);
    expect(phases(r.events)).toEqual(['dispatch.began', 'dispatch.succeeded', 'child.completed', 'output.harvested']);
    expectCausationChain(r.events);
    expect((await host.runs.snapshot(r.runId)).variables.parentResult).toBe('done');
  });

  it('HVMAP-2-unset conformance-subworkflow-input-mapping-no-default: an unset parent variable neither falls back to the child default nor arrives null', async () => {
    const r = await runToEnd(host, 'conformance-subworkflow-input-mapping-no-default');
    expect(r.status).toBe('completed');
    const [child] = await host.store.childRuns(r.runId);
    expect(child!.workflowId).toBe('conformance-subworkflow-input-mapping-child');
    expect(child!.status).toBe('completed');
    const vars = (await host.runs.snapshot(child!.runId)).variables;
    expect(vars.receivedPrdId).toBeUndefined();
  });

  it('HVMAP-1b-failed: a failed child is recorded child.failed and never harvested', async () => {
    await host.catalog.register(harvestingLoop('agents-fail-child', 'conformance-dispatch-deterministic-fail-child'));
    const r = await runToEnd(host, 'agents-fail-child');
    expect(r.status).toBe('completed');
    expectValidEvents(r.events);
    expect(phases(r.events)).toEqual(['dispatch.began', 'dispatch.succeeded', 'child.failed']);
    expect(ofType(r.events, CHAIN)[2]!.payload.error).toMatchObject({ code: 'hvmap_1b_failed_fixture' });
    expectCausationChain(r.events);
    expect((await host.runs.snapshot(r.runId)).variables.parentResult).toBe('');
  });

  it('HVMAP-1b-cancelled: a cancelled child is recorded child.cancelled and never harvested', async () => {
    await host.catalog.register(harvestingLoop('agents-cancel-child', 'conformance-dispatch-cancellable-child'));
    const runId = await start(host, 'agents-cancel-child');
    const child = await untilChild(host, runId, 'running');
    await host.runs.cancel(child!, { principal: 'operator' });
    expect(await host.runs.waitTerminal(runId)).toBe('completed');
    const events = await host.store.events(runId);
    expectValidEvents(events);
    expect(phases(events)).toEqual(['dispatch.began', 'dispatch.succeeded', 'child.cancelled']);
    expect((await host.runs.snapshot(runId)).variables.parentResult).toBe('');
  });

  it('a worker that cannot be created is recorded dispatch.failed without a childRunId; the loop goes on', async () => {
    await host.catalog.register(
      supervisorLoop('agents-missing-worker', [{ kind: 'next-worker', nextWorkerIds: ['no-such-workflow'] }]),
    );
    const r = await runToEnd(host, 'agents-missing-worker');
    expect(r.status).toBe('completed');
    expectValidEvents(r.events);
    const chain = ofType(r.events, CHAIN);
    expect(chain.map((e) => e.payload.phase)).toEqual(['dispatch.began', 'dispatch.failed']);
    expect(chain[1]!.payload).not.toHaveProperty('childRunId');
    expect(chain[1]!.payload.error).toMatchObject({ code: 'not_found' });
    expect(ofType(r.events, 'runOrchestrator.decided')).toHaveLength(2);
  });

  it("fanOutPolicy 'reject' fails a multi-worker decision with fan_out_unsupported", async () => {
    await host.catalog.register(
      supervisorLoop(
        'agents-fanout-reject',
        [{ kind: 'next-worker', nextWorkerIds: ['conformance-noop', 'conformance-noop'] }],
        { fanOutPolicy: 'reject' },
      ),
    );
    const r = await runToEnd(host, 'agents-fanout-reject');
    expect(r.status).toBe('failed');
    expect((await host.runs.snapshot(r.runId)).error?.code).toBe('fan_out_unsupported');
    expect(ofType(r.events, CHAIN)).toEqual([]);
  });

  it('ask-user suspends on a clarification and hands the answer back to the next turn', async () => {
    await host.catalog.register(supervisorLoop('agents-ask-user', [{ kind: 'ask-user', prompt: 'Which sample?' }]));
    const { runId } = await startUntil(host, 'agents-ask-user', 'waiting-input');
    await host.runs.resolveInterrupt(runId, 'dispatch', { resumeValue: 'sample-7' }, { principal: 'operator' });
    expect(await host.runs.waitTerminal(runId)).toBe('completed');
    const done = ofType(await host.store.events(runId), 'node.completed').filter((e) => e.nodeId === 'dispatch');
    expect(done[0]!.payload.outputs).toMatchObject({ answer: 'sample-7' });
  });
});

describe('cross-run causation', () => {
  it("the child run carries the parent's dispatch.began event and host id, and continues the parent's trace", async () => {
    const r = await runToEnd(host, 'conformance-multi-agent-handoff');
    const began = ofType(r.events, CHAIN)[0]!;
    const [child] = await host.store.childRuns(r.runId);
    const started = (await host.store.events(child!.runId))[0]!;
    expect(started.type).toBe('run.started');
    expect((started.payload.metadata as Record<string, unknown>).causation).toEqual({
      parentRunId: r.runId,
      parentNodeId: 'dispatch',
      eventId: began.eventId,
      hostId: 'mhs-host',
    });
    const parent = await host.store.getRun(r.runId);
    const traceOf = (tp: string | null): string | undefined => trace.getSpanContext(contextFrom(tp))?.traceId;
    expect(traceOf(child!.traceparent)).toBeDefined();
    expect(traceOf(child!.traceparent)).toBe(traceOf(parent!.traceparent));
  });
});

describe('run snapshot and caps', () => {
  it('the snapshot carries runOrchestrator (the supervisor pin) and validates against run-snapshot.schema.json', async () => {
    const r = await runToEnd(host, 'conformance-orchestrator-dispatch');
    const snap = await host.runs.snapshot(r.runId);
    expect(snap.runOrchestrator).toEqual({ agentId: 'core.conformance.supervisor', modelClass: 'reasoning' });
    expect(openwopSchemas().check(schemaId('run-snapshot'), snap)).toEqual([]);
    const plain = await runToEnd(host, 'conformance-noop');
    expect(await host.runs.snapshot(plain.runId)).not.toHaveProperty('runOrchestrator');
  });

  it('dispatch iterationCap fails the run with cap.breached once exceeded', async () => {
    const worker = { kind: 'next-worker', nextWorkerIds: ['conformance-noop'] };
    await host.catalog.register(supervisorLoop('agents-iteration-cap', [worker, worker, worker], { iterationCap: 2 }));
    const r = await runToEnd(host, 'agents-iteration-cap');
    expect(r.status).toBe('failed');
    expectValidEvents(r.events);
    expect(ofType(r.events, 'cap.breached')[0]!.payload).toMatchObject({
      kind: 'loop-iterations',
      limit: 2,
      observed: 3,
    });
    expect((await host.store.childRuns(r.runId)).length).toBe(2);
  });
});

describe('cancellation', () => {
  it('cancelling the parent while a worker runs cancels the child and ends the parent cancelled', async () => {
    await host.catalog.register(
      supervisorLoop('agents-cancel-parent', [
        { kind: 'next-worker', nextWorkerIds: ['conformance-dispatch-cancellable-child'] },
      ]),
    );
    const runId = await start(host, 'agents-cancel-parent');
    const child = await untilChild(host, runId, 'running');
    await host.runs.cancel(runId, { principal: 'operator' });
    expect(await host.runs.waitTerminal(runId)).toBe('cancelled');
    expect(await host.runs.waitTerminal(child!)).toBe('cancelled');
    const events = await host.store.events(runId);
    expectValidEvents(events);
    expect(phases(events)).toEqual(['dispatch.began', 'dispatch.succeeded']);
    expect(ofType(events, 'node.cancelled').map((e) => e.nodeId)).toEqual(['dispatch']);
  });
});
