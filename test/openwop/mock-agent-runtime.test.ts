// Guarantees (run-options.md §"Mock provider extension": the engine routes ALL AI activity calls through the mock), on
// a real host over a real store (SQLite always, PostgreSQL when MHS_TEST_PG_URL is set): `ctx.agentRuntime.delegate`
// of a run with `configurable.mockProvider` takes the mock's answer as its delegation choice and never calls the
// host model (whose script would choose another agent); under the `error` mock the node fails with the configured
// code. `ctx.agentRuntime` is reachable only from pack code, so this drives it in-process rather than over HTTP.
import { describe, expect, it } from 'vitest';
import { ScriptedProvider, parseAgentScript } from '../../src/ai/index.js';
import type { NodeModule } from '../../src/openwop/node-registry.js';
import { createAgentRuntimeFamily } from '../../src/openwop/services/agent-runtime-family.js';
import type { EnvelopeModel } from '../../src/openwop/services/ai-envelope-model.js';
import { mockProviderFamily } from '../../src/openwop/services/mock-provider-family.js';
import { BACKENDS } from '../ledger/helpers.js';
import { clock, closedAfterEach, expectValidEvents, oneNode } from './service-test-kit.js';
import { fixtureOn } from './usage-kit.js';

const PLANNER = 'vendor.mhs.lab.planner';
const CRITIC = 'vendor.mhs.lab.critic';
const MANIFESTS = [
  { agentId: PLANNER, persona: 'Planner', modelClass: 'reasoning', systemPrompt: 'You plan.' },
  { agentId: CRITIC, persona: 'Critic', modelClass: 'reasoning', systemPrompt: 'You critique.' },
];

const fixtures = closedAfterEach<{ close(): Promise<void> }>();

describe.each(BACKENDS)('ctx.agentRuntime under a mock provider on $name', (backend) => {
  it('delegate takes the mock’s choice without asking the host model; the error mock fails the node', async () => {
    const inner = new ScriptedProvider(
      parseAgentScript({ turns: [{ final: JSON.stringify({ agentId: PLANNER, confidence: 0.9 }) }] }),
    );
    let calls = 0;
    const model: EnvelopeModel = {
      name: inner.name,
      meter: inner.meter,
      next: (req) => {
        calls++;
        return inner.next(req as never) as ReturnType<EnvelopeModel['next']>;
      },
    };
    const node: NodeModule = {
      typeId: 'test.delegate',
      requires: ['agentRuntime'],
      async execute(ctx) {
        const refs = MANIFESTS.map((m) => ({ agentId: m.agentId }));
        const d = await ctx.agentRuntime!.delegate({ idempotencyKey: 'd1', task: 'review', agents: refs } as never);
        return { outputs: { d } };
      },
    };
    const fx = await fixtureOn(backend, fixtures, async (db) => ({
      families: [
        createAgentRuntimeFamily({ db, clock, model, manifests: MANIFESTS, manifestRuntimeMet: true }),
        mockProviderFamily(),
      ],
      nodes: [node],
    }));
    await fx.open();
    await fx.host.catalog.register(oneNode('delegate', { id: 'n', typeId: 'test.delegate' }));
    const run = async (mockProvider: unknown) => {
      const { run: r } = await fx.host.runs.createRun(
        { workflowId: 'delegate', configurable: { mockProvider } },
        { principal: 't' },
      );
      const status = await fx.host.runs.waitTerminal(r.runId);
      return { status, snap: await fx.host.runs.snapshot(r.runId), events: await expectValidEvents(fx.host, r.runId) };
    };

    const mocked = await run({ id: 'stream-text', config: { tokens: [JSON.stringify({ agentId: CRITIC })] } });
    expect(mocked.status).toBe('completed');
    expect((mocked.snap.nodeStates.n!.outputs as { d: { selectedAgentId: string } }).d.selectedAgentId).toBe(CRITIC);
    expect(mocked.events.filter((e) => e.type === 'output.chunk')).toHaveLength(1);

    const failed = await run({ id: 'error', config: { code: 'mock_upstream_down', message: 'down' } });
    expect([failed.status, failed.snap.error?.code]).toEqual(['failed', 'mock_upstream_down']);
    expect(calls).toBe(0);
  });
});
