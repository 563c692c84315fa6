// Guarantees (issue 15): under `serve --model openai-compatible:<model>` the agent runtime and
// core.ai.structuredOutput run on the real provider, over a local Chat Completions server (no network):
// ctx.agentRuntime.delegate (best-match) asks it for the choice through `response_format` json_schema offering only
// the listed agents and returns the chosen agent with its confidence; consensus asks each participant for a vote
// (json_schema consensus_vote, the persona's system prompt) and converges on the votes; spawn and messageSend need
// no model and work beside them; each call is metered with the server's counts. A `core.ai.structuredOutput` node
// naming the host model asks it for its outputSchema (object root as is) and outputs the answer; an invalid answer is
// repaired; a node naming another model of the provider runs on that model; a node naming `scripted:` is refused (provider_unavailable) without a request.
import { afterEach, describe, expect, it } from 'vitest';
import { llmCacheKey } from '../../src/ai/llm-cache-key.js';
import { chatCacheKeyInput } from '../../src/ai/providers/wire-cache-key.js';
import { buildServiceFamilies } from '../../src/cli/service-families.js';
import { createAgentRuntimeFamily } from '../../src/openwop/services/agent-runtime-family.js';
import type { EnvelopeModel } from '../../src/openwop/services/ai-envelope-model.js';
import type { NodeModule } from '../../src/openwop/node-registry.js';
import { createModelProvider } from '../../src/ai/index.js';
import { HostFixture, clock, closedAfterEach, oneNode, runToTerminal } from '../openwop/service-test-kit.js';
import { oaStream } from '../helpers/openai-fixtures.js';
import { startWireServer } from '../helpers/wire-server.js';
import type { WireReply, WireServer } from '../helpers/wire-server.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = Record<string, any>;

const KEY = 'sk-agents-test-0123456789abcdef';
const answer = (v: unknown, usage: [number, number] = [30, 6]): WireReply =>
  oaStream({ model: 'lab-llm', pieces: [JSON.stringify(v)], usage });

const MANIFESTS = [
  { agentId: 'vendor.mhs.lab.planner', persona: 'Planner', modelClass: 'reasoning', systemPrompt: 'You plan runs.' },
  { agentId: 'vendor.mhs.lab.critic', persona: 'Critic', modelClass: 'reasoning', systemPrompt: 'You criticise.' },
];

const opsNode: NodeModule = {
  typeId: 'test.agents',
  requires: ['agentRuntime'],
  async execute(ctx) {
    const rt = ctx.agentRuntime!;
    const planner = await rt.spawn({ manifestId: 'vendor.mhs.lab.planner', idempotencyKey: 'p' });
    await rt.spawn({ manifestId: 'vendor.mhs.lab.critic', idempotencyKey: 'c' });
    const message = await rt.messageSend({
      fromAgentId: 'vendor.mhs.lab.planner',
      toAgentId: 'vendor.mhs.lab.critic',
      channel: 'review',
      payload: { plan: 'heat to 37' },
      idempotencyKey: 'm',
    } as never);
    const agents = MANIFESTS.map((m) => ({ agentId: m.agentId }));
    const delegated = await rt.delegate({ agents, task: 'Review the heating plan', idempotencyKey: 'd' } as never);
    const consensus = await rt.consensus({
      participants: agents,
      proposal: { setpoint: 37 },
      idempotencyKey: 'k',
    } as never);
    return { outputs: { planner, message, delegated, consensus } };
  },
};

const fixtures = closedAfterEach<HostFixture>();
let srv: WireServer | undefined;
afterEach(async () => {
  await srv?.close();
  srv = undefined;
});

function model(url: string): EnvelopeModel {
  return createModelProvider(
    { provider: 'openai-compatible', model: 'lab-llm', baseUrl: `${url}/v1` },
    { OPENAI_API_KEY: KEY },
    { maxRetries: 0 },
  );
}

describe('the agent runtime on a real provider', () => {
  it('delegate and consensus ask the model with structured output; spawn and messageSend work beside them', async () => {
    srv = await startWireServer([
      answer({ agentId: 'vendor.mhs.lab.critic', confidence: 0.8 }, [41, 9]),
      answer({ vote: 'accept' }),
      answer({ vote: 'accept' }),
    ]);
    const url = srv.url;
    const fx = new HostFixture(async (db) => ({
      families: [
        createAgentRuntimeFamily({ db, clock, model: model(url), manifests: MANIFESTS, manifestRuntimeMet: true }),
      ],
      nodes: [opsNode],
    }));
    fixtures.push(fx);
    await fx.open();
    await fx.host.catalog.register(oneNode('agents', { typeId: 'test.agents' }));
    const r = await runToTerminal(fx.host, 'agents');
    expect(r.status).toBe('completed');
    const out = r.events.find((e) => e.type === 'node.completed')!.payload.outputs as Record<string, unknown>;
    expect(out.delegated).toMatchObject({ selectedAgentId: 'vendor.mhs.lab.critic', confidence: 0.8 });
    expect(out.consensus).toMatchObject({ converged: true, rounds: 1, agreement: { setpoint: 37 } });
    expect(out.planner).toMatchObject({ agentInstanceId: expect.stringMatching(/^agi_/) });
    expect(out.message).toMatchObject({ messageId: expect.stringMatching(/^msg_/) });

    const [choice, vote1, vote2] = srv.requests.map((q) => q.body as Body);
    expect(srv.requests).toHaveLength(3);
    expect(choice!.response_format.json_schema).toMatchObject({
      name: 'delegation_choice',
      schema: { properties: { agentId: { enum: MANIFESTS.map((m) => m.agentId) } } },
    });
    expect(JSON.stringify(choice!.messages)).toContain('Review the heating plan');
    expect(vote1!.response_format.json_schema.name).toBe('consensus_vote');
    expect(vote1!.messages[0].content).toContain('You plan runs.');
    expect(vote2!.messages[0].content).toContain('You criticise.');
    const usage = r.events.filter((e) => e.type === 'provider.usage').map((e) => e.payload);
    expect(usage).toHaveLength(3);
    expect(usage[0]).toMatchObject({
      provider: 'openai-compatible',
      model: 'lab-llm',
      inputTokens: 41,
      outputTokens: 9,
    });
    // Each recorded answer carries the LLM cache key of the request the server received (replay.md §A).
    const keys = r.events
      .filter((e) => e.type === 'log.appended')
      .map((e) => (e.payload.fields as { cacheKey?: string } | undefined)?.cacheKey)
      .filter((k) => k !== undefined);
    expect(keys).toEqual(
      srv.requests.map((q) => llmCacheKey(chatCacheKeyInput('openai-compatible', q.body as Record<string, unknown>))),
    );
  });
});

const TEMP = { type: 'object', required: ['temp'], properties: { temp: { type: 'number' } } };

function soWorkflow(id: string, provider: string, model: string) {
  return oneNode(id, {
    typeId: 'core.ai.structuredOutput',
    config: { provider, model, outputSchema: TEMP },
    inputs: {
      messages: {
        type: 'static',
        value: [
          { role: 'system', content: 'You read thermometers.' },
          { role: 'user', content: 'The chamber shows 36.6 degC.' },
        ],
      },
    },
  });
}

async function soRun(id: string, provider: string, modelId: string, replies: WireReply[]) {
  srv = await startWireServer(replies);
  const url = srv.url;
  const fx = new HostFixture(async (db) => ({
    families: await buildServiceFamilies(
      { model: 'openai-compatible:lab-llm', baseUrl: `${url}/v1`, modelRetries: 0 },
      db,
      clock,
      () => undefined,
      undefined,
      { env: { OPENAI_API_KEY: KEY } },
    ),
  }));
  fixtures.push(fx);
  await fx.open();
  await fx.host.catalog.register(soWorkflow(id, provider, modelId));
  const r = await runToTerminal(fx.host, id);
  const failed = r.events.find((e) => e.type === 'node.failed');
  return {
    ...r,
    nodeCode: (failed?.payload.error as { code?: string } | undefined)?.code,
    outputs: r.events.find((e) => e.type === 'node.completed')?.payload.outputs,
  };
}

describe('core.ai.structuredOutput on the configured model', () => {
  it('asks the model for outputSchema and outputs its answer', async () => {
    const r = await soRun('so-ok', 'openai-compatible', 'lab-llm', [answer({ temp: 36.6 }, [25, 4])]);
    expect(r.status).toBe('completed');
    expect(r.outputs).toEqual({ output: { temp: 36.6 } });
    const body = srv!.requests[0]!.body as Body;
    expect(body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'structured_output', schema: TEMP, strict: false },
    });
    expect(body.messages[0].content).toContain('You read thermometers.');
    expect(body.messages[1]).toEqual({ role: 'user', content: 'The chamber shows 36.6 degC.' });
    expect(r.events.filter((e) => e.type === 'provider.usage').map((e) => e.payload.inputTokens)).toEqual([25]);
  });

  it('repairs an invalid answer', async () => {
    const r = await soRun('so-fix', 'openai-compatible', 'lab-llm', [answer({ temp: 'warm' }), answer({ temp: 36 })]);
    expect(r.status).toBe('completed');
    expect(r.outputs).toEqual({ output: { temp: 36 } });
    expect(JSON.stringify(srv!.requests[1]!.body)).toContain('/temp must be number');
  });

  it('runs a node that names another model of the provider on that model', async () => {
    const r = await soRun('so-other', 'openai-compatible', 'other-llm', [answer({ temp: 20 }, [12, 3])]);
    expect(r.status).toBe('completed');
    expect((srv!.requests[0]!.body as Body).model).toBe('other-llm');
    expect(r.events.filter((e) => e.type === 'provider.usage').map((e) => e.payload)).toEqual([
      expect.objectContaining({ provider: 'openai-compatible', model: 'other-llm', inputTokens: 12 }),
    ]);
  });

  it('refuses a node that names the scripted provider, with no request', async () => {
    const r = await soRun('so-scripted', 'scripted', '/etc/passwd', [answer({ temp: 1 })]);
    expect([r.status, r.nodeCode]).toEqual(['failed', 'provider_unavailable']);
    expect(srv!.requests).toHaveLength(0);
  });
});
