// Guarantees (issue 15 acceptance; RFC 0006/0037, orchestrator-decision.schema.json): under `serve --model`, a
// workflow with `core.orchestrator.supervisor` and no mockDispatchPlan asks the model for each OrchestratorDecision
// through its structured output (OpenAI-compatible `response_format` json_schema / Anthropic forced tool, offering
// only the configured workers), over a local wire server scripted to answer "dispatch worker-b" then "terminate"
// (no network): the real OpenWOP host dispatches worker-b (not worker-a) as a child run, the second question carries
// the first decision, the run completes when the model terminates, agent.decided carries the model's confidence
// and each call is metered with the server's token counts. An answer that is not a decision is repaired once.
import { describe, expect, it } from 'vitest';
import { buildServiceFamilies } from '../../src/cli/service-families.js';
import type { WorkflowDefinition } from '../../src/openwop/types.js';
import {
  HostFixture,
  clock,
  closedAfterEach,
  expectValidEvents,
  oneNode,
  runToTerminal,
  workflowNode,
} from '../openwop/service-test-kit.js';
import { anStream } from '../helpers/anthropic-fixtures.js';
import { oaStream } from '../helpers/openai-fixtures.js';
import { startWireServer } from '../helpers/wire-server.js';
import type { WireReply, WireServer } from '../helpers/wire-server.js';

const DISPATCH_B = { kind: 'next-worker', nextWorkerIds: ['worker-b'], confidence: 0.9 };
const TERMINATE = { kind: 'terminate', reason: 'goal-reached', confidence: 0.95 };

interface Wire {
  name: string;
  model: string;
  env: Record<string, string>;
  answer(value: unknown, usage: [number, number]): WireReply;
  /** The offered decision schema, from a recorded request body. */
  schema(body: Record<string, unknown>): Record<string, unknown>;
}

const WIRES: Wire[] = [
  {
    name: 'openai-compatible',
    model: 'lab-llm',
    env: { OPENAI_API_KEY: 'sk-sup-test-0123456789abcdef' },
    answer: (v, usage) => oaStream({ model: 'lab-llm', pieces: [JSON.stringify(v)], usage }),
    schema(body) {
      const rf = body.response_format as {
        type: string;
        json_schema: { name: string; schema: Record<string, unknown> };
      };
      expect([rf.type, rf.json_schema.name]).toEqual(['json_schema', 'orchestrator_decision']);
      return rf.json_schema.schema;
    },
  },
  {
    name: 'anthropic',
    model: 'claude-test',
    env: { ANTHROPIC_API_KEY: 'sk-ant-sup-test-0123456789abcdef' },
    answer: (v, usage) =>
      anStream({
        model: 'claude-test',
        uses: [{ id: 'toolu_01', name: 'orchestrator_decision', jsonPieces: [JSON.stringify(v)] }],
        usage,
      }),
    schema(body) {
      expect(body.tool_choice).toEqual({ type: 'tool', name: 'orchestrator_decision' });
      return (body.tools as Array<{ input_schema: Record<string, unknown> }>)[0]!.input_schema;
    },
  },
];

function loop(id: string): WorkflowDefinition {
  return {
    ...oneNode(id, { typeId: 'core.noop' }),
    nodes: [
      workflowNode({
        id: 'supervisor',
        typeId: 'core.orchestrator.supervisor',
        name: 's',
        config: { workers: ['worker-a', 'worker-b'], systemPrompt: 'Goal: measure the sample with worker-b.' },
      }),
      workflowNode({ id: 'dispatch', typeId: 'core.dispatch', name: 'd', position: { x: 1, y: 0 } }),
    ],
    edges: [
      { id: 'e1', sourceNodeId: 'supervisor', targetNodeId: 'dispatch' },
      { id: 'e2', sourceNodeId: 'dispatch', targetNodeId: 'supervisor' },
    ],
  };
}

const fixtures = closedAfterEach<HostFixture>();
const servers = closedAfterEach<WireServer>();

async function run(w: Wire, replies: WireReply[], configurable?: Record<string, unknown>) {
  const srv = await startWireServer(replies);
  servers.push(srv);
  const baseUrl = w.name === 'anthropic' ? srv.url : `${srv.url}/v1`;
  const fx = new HostFixture(async (db) => ({
    families: await buildServiceFamilies(
      { model: `${w.name}:${w.model}`, baseUrl, modelRetries: 0 },
      db,
      clock,
      () => undefined,
      undefined,
      { env: w.env },
    ),
  }));
  fixtures.push(fx);
  await fx.open();
  for (const id of ['worker-a', 'worker-b']) await fx.host.catalog.register(oneNode(id, { typeId: 'core.noop' }));
  await fx.host.catalog.register(loop('model-loop'));
  const r = configurable
    ? await (async () => {
        const { run: created } = await fx.host.runs.createRun(
          { workflowId: 'model-loop', configurable },
          { principal: 't' },
        );
        await fx.host.runs.waitTerminal(created.runId);
        const events = await expectValidEvents(fx.host, created.runId);
        return { runId: created.runId, status: (await fx.host.store.getRun(created.runId))!.status, events };
      })()
    : await runToTerminal(fx.host, 'model-loop');
  return { ...r, srv, host: fx.host };
}

describe.each(WIRES)('the supervisor asks $name for its decisions', (w) => {
  it('dispatches the worker the model chose and completes when it terminates', async () => {
    const r = await run(w, [w.answer(DISPATCH_B, [120, 20]), w.answer(TERMINATE, [150, 18])]);
    expect(r.status).toBe('completed');

    const decided = r.events.filter((e) => e.type === 'runOrchestrator.decided').map((e) => e.payload.decision);
    expect(decided).toEqual([DISPATCH_B, TERMINATE]);
    expect(r.events.filter((e) => e.type === 'agent.decided').map((e) => e.payload.confidence)).toEqual([0.9, 0.95]);
    const workers = r.events
      .filter((e) => e.type === 'core.workflowChain.event' && e.payload.phase === 'dispatch.began')
      .map((e) => e.payload.workerId);
    expect(workers).toEqual(['worker-b']);
    const children = await r.host.store.childRuns(r.runId);
    expect(children.map((c) => [c.workflowId, c.status])).toEqual([['worker-b', 'completed']]);

    expect(r.srv.requests).toHaveLength(2);
    const schema = w.schema(r.srv.requests[0]!.body);
    expect(schema).toMatchObject({
      type: 'object',
      required: ['kind', 'confidence'],
      properties: { nextWorkerIds: { items: { enum: ['worker-a', 'worker-b'] } } },
    });
    const first = JSON.stringify(r.srv.requests[0]!.body);
    expect(first).toContain('Goal: measure the sample with worker-b.');
    expect(JSON.stringify(r.srv.requests[1]!.body)).toContain('worker-b');
    expect(JSON.stringify(r.srv.requests[1]!.body)).toContain('\\"turn\\":2');

    const usage = r.events.filter((e) => e.type === 'provider.usage').map((e) => e.payload);
    expect(usage).toEqual([
      expect.objectContaining({ provider: w.name, model: w.model, inputTokens: 120, outputTokens: 20 }),
      expect.objectContaining({ provider: w.name, model: w.model, inputTokens: 150, outputTokens: 18 }),
    ]);
  });

  it("runs on the model a run names with configurable.model instead of the host's", async () => {
    // run-options.md §Reserved keys: configurable.model overrides the model of the nodes that consume it.
    const r = await run(w, [w.answer(DISPATCH_B, [7, 3]), w.answer(TERMINATE, [8, 2])], { model: 'other-model' });
    expect(r.status).toBe('completed');
    expect(r.srv.requests.map((q) => q.body.model)).toEqual(['other-model', 'other-model']);
    const workers = r.events
      .filter((e) => e.type === 'core.workflowChain.event' && e.payload.phase === 'dispatch.began')
      .map((e) => e.payload.workerId);
    expect(workers).toEqual(['worker-b']);
  });

  it('fails the supervisor with provider_unavailable when the named model cannot be built', async () => {
    const r = await run(w, [], { model: 'scripted:/nonexistent.json' });
    expect(r.status).toBe('failed');
    const failed = r.events.find((e) => e.type === 'node.failed');
    expect(failed?.payload).toMatchObject({ error: { code: 'provider_unavailable' } });
    expect(r.srv.requests).toHaveLength(0);
  });

  it('re-asks an answer that is not a valid decision (an unknown worker)', async () => {
    const wrong = { kind: 'next-worker', nextWorkerIds: ['worker-z'], confidence: 0.9 };
    const r = await run(w, [w.answer(wrong, [1, 1]), w.answer(TERMINATE, [1, 1])]);
    expect(r.status).toBe('completed');
    expect(r.events.filter((e) => e.type === 'runOrchestrator.decided').map((e) => e.payload.decision)).toEqual([
      TERMINATE,
    ]);
    expect(JSON.stringify(r.srv.requests[1]!.body)).toContain('is no worker');
    expect(r.events.filter((e) => e.type === 'envelope.retry.attempted')).toHaveLength(1);
  });
});
