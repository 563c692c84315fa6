// Guarantees (RFC 0002 / 0023 / 0024, CP-1): on a real host (SQLite file) with the agents family, a node pinned
// to an agent emits the mock-agent contract in order (agent.reasoned → toolCalled/toolReturned pairs, the
// return caused by its call → agent.handoff → agent.decided) under the pinned agentId; streamed reasoning is
// deltas 0..N-1 then one agent.reasoned carrying their concatenation; a decision below the escalation threshold
// (configurable.escalationThreshold, else the node's, else 0.7) suspends the node with node.suspended {reason: 'low-confidence'} and the run waits for approval
// through the REST interrupt route, where accept continues and reject fails the run (approval_rejected). A
// passthrough node without a pin emits no agent.* event. Every event validates against the OpenWOP schemas.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenwopHost } from '../../src/openwop/host.js';
import type { WorkflowDefinition } from '../../src/openwop/types.js';
import { createTokenStore } from '../../src/policy/tokens.js';
import { buildApp } from '../../src/server/app.js';
import {
  clock,
  closeHost,
  expectValidEvents,
  ofType,
  openAgentsHost,
  runToEnd,
  startUntil,
  types,
  untilStatus,
} from './agents-harness.js';
import type { Opened } from './agents-harness.js';
import { oneNode } from './service-test-kit.js';

let o: Opened;
let host: OpenwopHost;
let app: Awaited<ReturnType<typeof buildApp>>['app'];
let auth: Record<string, string>;

beforeAll(async () => {
  o = await openAgentsHost();
  host = o.host;
  const tokens = createTokenStore(o.db, clock);
  auth = { authorization: `Bearer ${(await tokens.add('agents', 'client')).token}` };
  ({ app } = await buildApp({ host, auth: tokens, clock }));
});

afterAll(async () => {
  await app.close();
  await closeHost(o);
});

const AGENT_TYPES = /^agent\./;

/** A one-node workflow on core.identity, pinned to `agent` when given. */
function single(id: string, config: Record<string, unknown>, agent?: Record<string, unknown>): WorkflowDefinition {
  return oneNode(id, { typeId: 'core.identity', config, ...(agent ? { agent } : {}) });
}

/** Answers the low-conf-decider approval of `runId` through the REST interrupt route. */
function answerApproval(runId: string, action: 'accept' | 'reject') {
  return app.inject({
    method: 'POST',
    url: `/v1/runs/${runId}/interrupts/low-conf-decider`,
    headers: auth,
    payload: { action },
  });
}

describe('agent identity (RFC 0002 / 0023)', () => {
  it('conformance-agent-reasoning: reasoned → toolCalled/toolReturned → handoff → decided, pinned agentId, paired causation', async () => {
    const r = await runToEnd(host, 'conformance-agent-reasoning');
    expect(r.status).toBe('completed');
    expectValidEvents(r.events);
    const agentEvents = r.events.filter((e) => AGENT_TYPES.test(e.type));
    expect(types(agentEvents)).toEqual([
      'agent.reasoned',
      'agent.toolCalled',
      'agent.toolReturned',
      'agent.handoff',
      'agent.decided',
    ]);
    for (const e of agentEvents) expect(e.nodeId).toBe('reasoner');
    expect(agentEvents.filter((e) => e.type !== 'agent.handoff').map((e) => e.payload.agentId)).toEqual(
      Array(4).fill('core.conformance.reasoning-agent'),
    );
    expect(agentEvents[3]!.payload).toMatchObject({
      fromAgentId: 'core.conformance.reasoning-agent',
      from: { agentId: 'core.conformance.reasoning-agent', modelClass: 'reasoning' },
    });
    expect(agentEvents[3]!.payload.toAgentId).toBe((agentEvents[3]!.payload.to as { agentId: string }).agentId);
    expect(agentEvents[1]!.payload).toHaveProperty('arguments');
    expect(agentEvents[2]!.payload).toHaveProperty('result');
    const [called, returned] = [agentEvents[1]!, agentEvents[2]!];
    expect(returned.payload.callId).toBe(called.payload.callId);
    expect(returned.causationId).toBe(called.eventId);
    expect(ofType(r.events, 'node.suspended')).toEqual([]);
    // The agent events come before the node's completion, in the node's activation.
    const order = types(r.events);
    expect(order.indexOf('agent.decided')).toBeLessThan(order.indexOf('node.completed'));
  });

  it('conformance-agent-reasoning-streaming: deltas 0..N-1, then one agent.reasoned with their concatenation', async () => {
    const r = await runToEnd(host, 'conformance-agent-reasoning-streaming');
    expect(r.status).toBe('completed');
    expectValidEvents(r.events);
    const deltas = ofType(r.events, 'agent.reasoning.delta');
    expect(deltas.map((e) => e.payload.sequence)).toEqual([0, 1, 2]);
    const reasoned = ofType(r.events, 'agent.reasoned');
    expect(reasoned).toHaveLength(1);
    expect(reasoned[0]!.payload.reasoning).toBe(deltas.map((e) => e.payload.delta as string).join(''));
    expect(reasoned[0]!.payload.agentId).toBe('core.conformance.streaming-reasoner');
    expect(reasoned[0]!.sequence).toBeGreaterThan(deltas.at(-1)!.sequence);
  });

  it('CP-1 conformance-agent-low-confidence: suspends low-confidence, waiting-approval; accept through REST completes', async () => {
    const { runId, events } = await startUntil(host, 'conformance-agent-low-confidence', 'waiting-approval');
    expectValidEvents(events);
    const decided = ofType(events, 'agent.decided');
    expect(decided).toHaveLength(1);
    expect(decided[0]!.payload).toMatchObject({ agentId: 'core.conformance.low-conf-decider', confidence: 0.5 });
    const suspended = ofType(events, 'node.suspended');
    expect(suspended).toHaveLength(1);
    expect(suspended[0]!.payload).toMatchObject({
      reason: 'low-confidence',
      kind: 'approval',
      threshold: 0.7,
      observed: 0.5,
    });
    expect(suspended[0]!.sequence).toBeGreaterThan(decided[0]!.sequence);
    const snap = (await app.inject({ method: 'GET', url: `/v1/runs/${runId}`, headers: auth })).json();
    expect(snap.status).toBe('waiting-approval');

    const res = await answerApproval(runId, 'accept');
    expect(res.statusCode).toBe(200);
    expect(await host.runs.waitTerminal(runId)).toBe('completed');
    const all = await host.store.events(runId);
    expectValidEvents(all);
    expect(ofType(all, 'agent.decided')).toHaveLength(1);
    expect(ofType(all, 'approval.received')[0]!.payload.action).toBe('accept');
  });

  it('CP-1: reject through REST fails the node and the run with approval_rejected', async () => {
    const { runId } = await startUntil(host, 'conformance-agent-low-confidence', 'waiting-approval');
    const res = await answerApproval(runId, 'reject');
    expect(res.statusCode).toBe(200);
    expect(await host.runs.waitTerminal(runId)).toBe('failed');
    const snap = await host.runs.snapshot(runId);
    expect(snap.error?.code).toBe('approval_rejected');
    expectValidEvents(await host.store.events(runId));
  });

  it('the threshold resolves per run (configurable) then per node, and a confident decision does not suspend', async () => {
    const decision = { decision: { route: 'a' }, confidence: 0.8 };
    await host.catalog.register(
      single('agents-confident', { mockDecision: decision }, { agentId: 'vendor.test.agent' }),
    );
    await host.catalog.register(
      single('agents-strict', { mockDecision: decision, escalationThreshold: 0.9 }, { agentId: 'vendor.test.agent' }),
    );
    const ok = await runToEnd(host, 'agents-confident');
    expect(ok.status).toBe('completed');
    expect(ofType(ok.events, 'node.suspended')).toEqual([]);
    const { runId: strictRun, events: ev } = await startUntil(host, 'agents-strict', 'waiting-approval');
    expect(ofType(ev, 'node.suspended')[0]!.payload).toMatchObject({ reason: 'low-confidence', threshold: 0.9 });
    await host.runs.cancel(strictRun, { principal: 't' });
    // RunOptions.configurable.escalationThreshold overrides per run.
    const { run } = await host.runs.createRun(
      { workflowId: 'agents-confident', configurable: { escalationThreshold: 0.85 } },
      { principal: 't' },
    );
    const held = await untilStatus(host, run.runId, 'waiting-approval');
    expect(ofType(held, 'node.suspended')[0]!.payload).toMatchObject({ reason: 'low-confidence', threshold: 0.85 });
    await host.runs.cancel(run.runId, { principal: 't' });
  });

  it('a passthrough node without an agent pin emits no agent.* events (RFC 0023 authorized emitters)', async () => {
    await host.catalog.register(single('agents-unpinned', { emitReasoningTrace: true, mockConfidence: 0.1 }));
    const r = await runToEnd(host, 'agents-unpinned');
    expect(r.status).toBe('completed');
    expect(r.events.filter((e) => AGENT_TYPES.test(e.type))).toEqual([]);
  });
});
