// Guarantees (RFC 0026 §B, run-event-payloads.schema.json $defs.providerUsage, capabilities.schema.json
// providerUsage): on a real host over a real SQLite file, ctx.aiEnvelope over the scripted model appends exactly one
// `provider.usage` event per model call (a clarification round = 2 calls = 2 events), each valid against the real
// run-event schema and its payload $def; usage a script turn declares is carried verbatim, otherwise the documented
// estimate (ceil(UTF-8 bytes / 4) of the prompt texts and of the answer) is used; a host restarted mid-node (answer
// recorded, interrupt pending) or after the answer emits no second event for a recorded answer; a replay fork calls
// no model and appends no provider.usage beyond the copied prefix, while a branch fork's live call is metered;
// `RunSnapshot.metrics.openwopCost.tokens` sums the events and the snapshot validates; `providerUsage` (with
// `costEstimates: false`, no cost ever emitted) is advertised only when the installed family's model is metered.
// The restart and fork cases run on every store backend (SQLite always, PostgreSQL when MHS_TEST_PG_URL is set).
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import type { ModelRequest, ModelTurn } from '../../src/ai/index.js';
import type { NodeModule } from '../../src/openwop/node-registry.js';
import { openwopSchemas, schemaId } from '../../src/openwop/schemas.js';
import { createAiEnvelopeFamily } from '../../src/openwop/services/ai-envelope-family.js';
import type { EnvelopeModel } from '../../src/openwop/services/ai-envelope-model.js';
import type { AiEnvelopeRequest } from '../../src/openwop/services/ai-envelope-surface.js';
import { BACKENDS, sqliteBackend } from '../ledger/helpers.js';
import type { Backend } from '../ledger/helpers.js';
import {
  HOLD,
  HostFixture,
  closedAfterEach,
  expectValidCapabilities,
  expectValidEvents,
  oneNode,
  resolveWhenPending,
  runToTerminal,
  startUntilAsked,
} from './service-test-kit.js';
import { SpyModel, fixtureOn, usageOf } from './usage-kit.js';

const SUMMARY = { type: 'object', required: ['title'], properties: { title: { type: 'string' } } };
const ok = (title: string): string => JSON.stringify({ type: 'vendor.mhs.summary', payload: { title } });
const CLARIFY = JSON.stringify({
  type: 'clarification.request',
  payload: { questions: [{ id: 'q', question: 'Which pump?' }] },
});
const DECLARED = { inputTokens: 120, outputTokens: 7 };

/** A model that is no LLM provider (no meter): the stand-in case. */
const UNMETERED: EnvelopeModel = { name: 'plain', next: () => Promise.resolve({ kind: 'final', text: ok('P') }) };

/** The documented rule, written out independently: ceil(UTF-8 bytes / 4) of the texts joined with newlines. */
const tokens = (texts: Array<string | null>): number => Math.ceil(Buffer.byteLength(texts.join('\n'), 'utf8') / 4);
function estimated(call: { req: ModelRequest; reply: ModelTurn }) {
  return {
    inputTokens: tokens(call.req.messages.map((m) => ('content' in m ? (m.content as string) : ''))),
    outputTokens: tokens([call.reply.kind === 'final' ? call.reply.text : (call.reply.text ?? '')]),
  };
}

const genNode: NodeModule = {
  typeId: 'test.generate',
  requires: ['aiEnvelope'],
  async execute(ctx) {
    const req: AiEnvelopeRequest = {
      systemPrompt: 'Summarise.',
      envelopeType: 'vendor.mhs.summary',
      userMessage: 'pumps',
      idempotencyKey: 'k1',
    };
    const result = await ctx.aiEnvelope!.generate(req);
    if (ctx.node.config.hold) await ctx.interrupt(HOLD);
    return { outputs: { payload: result.payload } };
  },
};

const fixtures = closedAfterEach<{ close(): Promise<void> }>();

async function start(model: EnvelopeModel, backend: Backend = sqliteBackend) {
  const fx = await fixtureOn(backend, fixtures, async () => ({
    families: [createAiEnvelopeFamily({ model, envelopes: { 'vendor.mhs.summary': SUMMARY } })],
    nodes: [genNode],
  }));
  await fx.open();
  await fx.host.catalog.register(oneNode('gen', { typeId: 'test.generate' }));
  await fx.host.catalog.register(oneNode('gen-hold', { typeId: 'test.generate', config: { hold: true } }));
  return fx;
}

/** The payload without `traceId` (the node span's trace id, asserted well formed). */
function withoutTrace(p: Record<string, unknown>): Record<string, unknown> {
  const { traceId, ...rest } = p;
  expect(traceId).toMatch(/^[0-9a-f]{32}$/);
  return rest;
}

describe.each(BACKENDS)('provider.usage (RFC 0026 §B) for ctx.aiEnvelope on $name', (backend) => {
  it('one event per model call across a clarification round and a restart; declared usage verbatim, else the estimate', async () => {
    const model = new SpyModel({
      model: 'lab-model-1',
      turns: [{ final: CLARIFY, usage: DECLARED }, { final: ok('P1') }],
    });
    const fx = await start(model, backend);
    const { runId } = await startUntilAsked(fx.host, 'gen');
    // Restarted with the first answer recorded and the clarification pending: that answer is not metered again.
    const answer = { resumeValue: { answers: [{ id: 'q', answer: 'P1' }] } };
    expect(await fx.restartAndResolve(runId, answer)).toBe('completed');

    const events = await expectValidEvents(fx.host, runId); // run-event schema + providerUsage payload $def
    const usage = usageOf(events);
    expect(model.calls).toHaveLength(2);
    expect(usage).toHaveLength(2);
    for (const e of usage) expect(openwopSchemas().checkEvent(e)).toEqual([]);
    const second = estimated(model.calls[1]!);
    expect(second.inputTokens).toBeGreaterThan(0);
    expect(usage.map((e) => withoutTrace(e.payload))).toEqual([
      { provider: 'scripted', model: 'lab-model-1', ...DECLARED, totalTokens: 127, nodeId: 'n' },
      {
        provider: 'scripted',
        model: 'lab-model-1',
        ...second,
        totalTokens: second.inputTokens + second.outputTokens,
        nodeId: 'n',
      },
    ]);
    expect(usage.every((e) => e.nodeId === 'n' && !('costEstimateUsd' in e.payload))).toBe(true);
    // Each event sits with the checkpoint recording its answer (appended in one batch).
    for (const e of usage) expect(events[e.sequence + 1]).toMatchObject({ type: 'log.appended', nodeId: 'n' });
    // SR-1: no prompt or answer text in the payload.
    expect(JSON.stringify(usage)).not.toMatch(/Summarise|pumps|Which pump/);

    const snap = (await fx.host.runs.snapshot(runId)) as unknown as Record<string, unknown>;
    expect(openwopSchemas().check(schemaId('run-snapshot'), snap)).toEqual([]);
    expect(snap.metrics).toEqual({
      openwopCost: {
        tokens: {
          input: DECLARED.inputTokens + second.inputTokens,
          output: DECLARED.outputTokens + second.outputTokens,
        },
        provider: 'scripted',
        model: 'lab-model-1',
      },
    });
  });

  it('no second event after a restart past the answer; a replay fork adds none; a branch fork meters its live call', async () => {
    const model = new SpyModel({ turns: [{ final: ok('Once'), usage: DECLARED }] });
    const fx = await start(model, backend);
    // The node holds after generate returned; the host restarts with the answer and the result recorded.
    const { runId } = await startUntilAsked(fx.host, 'gen-hold');
    expect(await fx.restartAndResolve(runId, { action: 'accept' })).toBe('completed');
    const src = { runId, events: await expectValidEvents(fx.host, runId) };
    expect(usageOf(src.events).map((e) => withoutTrace(e.payload))).toEqual([
      { provider: 'scripted', model: 'scripted', ...DECLARED, totalTokens: 127, nodeId: 'n' },
    ]);
    const caller = { principal: 't' };
    const startedSeq = src.events.find((e) => e.type === 'node.started')!.sequence;
    const usageSeq = usageOf(src.events)[0]!.sequence;
    // Replay forks from the start, from the node's start and from just after the usage event (mid-node).
    for (const fromSeq of [0, startedSeq, usageSeq + 1]) {
      const { fork } = await fx.host.replay.fork(src.runId, { mode: 'replay', fromSeq }, caller);
      expect(await fx.host.runs.waitTerminal(fork.runId)).toBe('completed');
      const events = await expectValidEvents(fx.host, fork.runId);
      const copied = usageOf(src.events).filter((e) => e.sequence < fromSeq).length;
      expect({ fromSeq, usage: usageOf(events).length }).toEqual({ fromSeq, usage: copied });
      expect(usageOf(events).every((e) => e.sequence < fromSeq)).toBe(true);
    }
    expect(model.calls).toHaveLength(1);
    // A branch re-executes the node live: a real provider call, metered once.
    const { fork: branch } = await fx.host.replay.fork(src.runId, { mode: 'branch', fromSeq: startedSeq }, caller);
    await resolveWhenPending(fx.host, branch.runId, { action: 'accept' }); // the branch holds again
    expect(await fx.host.runs.waitTerminal(branch.runId)).toBe('completed');
    expect(model.calls).toHaveLength(2);
    const branched = usageOf(await expectValidEvents(fx.host, branch.runId));
    expect(branched.map((e) => [e.sequence >= startedSeq, e.payload.inputTokens])).toEqual([[true, 120]]);
  });
});

describe('providerUsage advertisement (capabilities.schema.json providerUsage)', () => {
  it('advertises providerUsage (costEstimates false) only when the installed model is metered; the document validates', async () => {
    const metered = expectValidCapabilities((await start(new SpyModel({ turns: [{ final: ok('A') }] }))).host);
    expect(metered.providerUsage).toEqual({ supported: true, costEstimates: false });

    const plain = await start(UNMETERED);
    expect(expectValidCapabilities(plain.host).providerUsage).toBeUndefined();
    // Its calls are not LLM provider invocations: no event either.
    const r = await runToTerminal(plain.host, 'gen');
    expect([r.status, usageOf(r.events)]).toEqual(['completed', []]);
    expect(((await plain.host.runs.snapshot(r.runId)) as { metrics?: unknown }).metrics).toBeUndefined();

    const bare = new HostFixture(async () => ({}));
    fixtures.push(bare);
    await bare.open();
    expect(expectValidCapabilities(bare.host).providerUsage).toBeUndefined();
  });
});
