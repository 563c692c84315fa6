// Guarantees (host-capabilities.md §host.aiEnvelope `usage`, RFC 0026 §B, run-snapshot.schema.json
// metrics.openwopCost), on a real host over every store backend (SQLite always, PostgreSQL when MHS_TEST_PG_URL is
// set): the result of ctx.aiEnvelope.generate carries `usage` = the sum of the generation's `provider.usage` events
// (a clarification round = 2 calls, the first recorded before a host restart and read back after it); a node
// re-executed after a restart past the result, and a replay fork resolving the node, get the same usage and append no
// new provider.usage; an unmetered model gives no `usage`. A parent run's metrics.openwopCost counts only its own
// events, the child run's counts the child's, so summing run snapshots counts every call exactly once.
import { describe, expect, it } from 'vitest';
import type { NodeModule } from '../../src/openwop/node-registry.js';
import { openwopSchemas, schemaId } from '../../src/openwop/schemas.js';
import { createAiEnvelopeFamily } from '../../src/openwop/services/ai-envelope-family.js';
import type { EnvelopeModel } from '../../src/openwop/services/ai-envelope-model.js';
import type { RunEvent } from '../../src/openwop/types.js';
import { BACKENDS } from '../ledger/helpers.js';
import type { OpenwopHost } from '../../src/openwop/host.js';
import {
  HOLD,
  closedAfterEach,
  expectValidEvents,
  oneNode,
  resolveWhenPending,
  runToTerminal,
  startUntilAsked,
  waitForEvent,
} from './service-test-kit.js';
import { SpyModel, fixtureOn, summed, usageOf } from './usage-kit.js';

const SUMMARY = { type: 'object', required: ['title'], properties: { title: { type: 'string' } } };
const ok = (title: string): string => JSON.stringify({ type: 'vendor.mhs.summary', payload: { title } });
const CLARIFY = JSON.stringify({
  type: 'clarification.request',
  payload: { questions: [{ id: 'q', question: 'Which pump?' }] },
});
const U1 = { inputTokens: 120, outputTokens: 7 };
const U2 = { inputTokens: 40, outputTokens: 3 };

/** Generates once, logs the result's usage on every execution (so each pass is visible), optionally holds. */
const genNode: NodeModule = {
  typeId: 'test.generate.usage',
  requires: ['aiEnvelope'],
  async execute(ctx) {
    const r = await ctx.aiEnvelope!.generate({
      systemPrompt: 'Summarise.',
      envelopeType: 'vendor.mhs.summary',
      userMessage: String(ctx.node.config.topic ?? 'pumps'),
      idempotencyKey: 'k1',
    });
    const seen = r.usage ?? null;
    await ctx.emit([
      {
        type: 'log.appended',
        payload: { level: 'info', message: 'usage seen', nodeId: ctx.node.id, fields: { seen } },
      },
    ]);
    if (ctx.node.config.hold) await ctx.interrupt(HOLD);
    return { outputs: { usage: seen } };
  },
};

const seenUsages = (events: readonly RunEvent[]): unknown[] =>
  events.filter((e) => e.type === 'log.appended' && e.payload.message === 'usage seen').map((e) => e.payload.fields);

const fixtures = closedAfterEach<{ close(): Promise<void> }>();

describe.each(BACKENDS)('provider.usage figures in results and snapshots on $name', (backend) => {
  async function start(model: EnvelopeModel) {
    const fx = await fixtureOn(backend, fixtures, async () => ({
      families: [createAiEnvelopeFamily({ model, envelopes: { 'vendor.mhs.summary': SUMMARY } })],
      nodes: [genNode],
    }));
    await fx.open();
    return fx;
  }

  it('result.usage sums the generation’s provider.usage events and survives restarts and replay unchanged', async () => {
    const model = new SpyModel({ model: 'lab-model-1', turns: [{ final: CLARIFY, usage: U1 }, { final: ok('P1') }] });
    const fx = await start(model);
    await fx.host.catalog.register(oneNode('gen-hold', { typeId: 'test.generate.usage', config: { hold: true } }));
    const { runId } = await startUntilAsked(fx.host, 'gen-hold'); // the clarification: first answer recorded
    // Restart 1, mid-generation: the first call's usage is read back from the log; the second call is live.
    await fx.reopen();
    await resolveWhenPending(fx.host, runId, { resumeValue: { answers: [{ id: 'q', answer: 'P1' }] } });
    // Restart 2, past the result (the node holds): the recorded result is returned with its recorded usage.
    await holdReached(fx.host, runId);
    expect(await fx.restartAndResolve(runId, { action: 'accept' })).toBe('completed');

    const events = await expectValidEvents(fx.host, runId);
    expect([model.calls.length, usageOf(events).length]).toEqual([2, 2]);
    const total = summed(events);
    expect(total.inputTokens).toBeGreaterThan(U1.inputTokens); // the live second call was metered too
    // Both executions of the node saw the same figures: the sum of the two events.
    expect(seenUsages(events)).toEqual([{ seen: total }, { seen: total }]);
    const done = events.find((e) => e.type === 'node.completed')!;
    expect(done.payload.outputs).toEqual({ usage: total });
    const snap = (await fx.host.runs.snapshot(runId)) as unknown as { metrics: { openwopCost: { tokens: unknown } } };
    expect(snap.metrics.openwopCost.tokens).toEqual({ input: total.inputTokens, output: total.outputTokens });

    // A replay fork resolves the node from the recorded outcome: same usage, no new provider.usage, no model call.
    const { fork } = await fx.host.replay.fork(runId, { mode: 'replay', fromSeq: 0 }, { principal: 't' });
    expect(await fx.host.runs.waitTerminal(fork.runId)).toBe('completed');
    const forked = await expectValidEvents(fx.host, fork.runId);
    expect(forked.find((e) => e.type === 'node.completed')!.payload.outputs).toEqual({ usage: total });
    expect([usageOf(forked).length, model.calls.length]).toEqual([0, 2]);
  });

  it('an unmetered stand-in model gives no result.usage and no event', async () => {
    const plain: EnvelopeModel = { name: 'plain', next: () => Promise.resolve({ kind: 'final', text: ok('P') }) };
    const fx = await start(plain);
    await fx.host.catalog.register(oneNode('gen', { typeId: 'test.generate.usage' }));
    const r = await runToTerminal(fx.host, 'gen');
    expect([r.status, usageOf(r.events), seenUsages(r.events)]).toEqual(['completed', [], [{ seen: null }]]);
  });

  it('a parent’s metrics.openwopCost counts its own calls only; its child run’s counts the child’s (no double count)', async () => {
    // A metered model whose provider reports U2 for the child's prompt and U1 for the parent's.
    const calls: string[] = [];
    const model: EnvelopeModel = {
      name: 'scripted',
      meter: { provider: 'scripted', model: 'lab-model-1' },
      next: (req) => {
        const topic = String(req.messages[1]?.content);
        calls.push(topic);
        return Promise.resolve({ kind: 'final', text: ok(topic), usage: topic === 'child' ? U2 : U1 });
      },
    };
    const fx = await start(model);
    await fx.host.catalog.register(
      oneNode('usage-child', { typeId: 'test.generate.usage', config: { topic: 'child' } }),
    );
    await fx.host.catalog.register({
      ...oneNode('usage-parent', { typeId: 'test.generate.usage' }),
      nodes: [
        { id: 'own', name: 'own', typeId: 'test.generate.usage', position: { x: 0, y: 0 }, config: {}, inputs: {} },
        {
          id: 'sub',
          name: 'sub',
          typeId: 'core.subWorkflow',
          position: { x: 200, y: 0 },
          config: { workflowId: 'usage-child' },
          inputs: {},
        },
      ],
      edges: [{ id: 'e1', sourceNodeId: 'own', targetNodeId: 'sub' }],
    });
    const parent = await runToTerminal(fx.host, 'usage-parent');
    expect(parent.status).toBe('completed');
    const [child] = await fx.host.store.childRuns(parent.runId);
    const childEvents = await expectValidEvents(fx.host, child!.runId);
    expect([usageOf(parent.events).length, usageOf(childEvents).length]).toEqual([1, 1]);

    const snap = async (runId: string) => (await fx.host.runs.snapshot(runId)) as unknown as Record<string, unknown>;
    const p = await snap(parent.runId);
    const c = await snap(child!.runId);
    for (const s of [p, c]) expect(openwopSchemas().check(schemaId('run-snapshot'), s)).toEqual([]);
    const cost = (tokens: typeof U1) => ({
      openwopCost: {
        tokens: { input: tokens.inputTokens, output: tokens.outputTokens },
        provider: 'scripted',
        model: 'lab-model-1',
      },
    });
    expect([p.metrics, c.metrics]).toEqual([cost(U1), cost(U2)]);
    // Two calls were made, one per run: each is counted in exactly one run's metrics.
    expect(calls).toEqual(['pumps', 'child']);
  });
});

/** Waits until the node holds on its approval (the result and one "usage seen" record are in the log). */
async function holdReached(host: OpenwopHost, runId: string): Promise<void> {
  await waitForEvent(host, runId, (e) => e.type === 'interrupt.requested' && e.payload.kind === 'approval');
  expect(seenUsages(await host.store.events(runId))).toHaveLength(1);
}
