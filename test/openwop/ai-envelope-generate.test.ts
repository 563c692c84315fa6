// Guarantees (RFC 0144 §aiEnvelope, ai-envelope.md): ctx.aiEnvelope.generate returns an envelope valid against
// ai-envelope.schema.json and its kind's payload schema; invalid answers are re-asked up to limits.schemaRounds then
// fail envelope_invalid; schema.request is answered with the kind's schema; a clarification.request is
// lifted to a clarification interrupt (clarificationRounds bound it); the envelope catalog and limits advertised are
// the ones enforced and the document validates; `await` is neither exposed nor advertised; each answer is recorded in the run's log, so a host restarted
// mid-node does not call the model again and returns the same envelope.
import { describe, expect, it } from 'vitest';
import { ScriptedProvider, parseAgentScript } from '../../src/ai/index.js';
import type { NodeModule } from '../../src/openwop/node-registry.js';
import { openwopSchemas, schemaId } from '../../src/openwop/schemas.js';
import { createAiEnvelopeFamily } from '../../src/openwop/services/ai-envelope-family.js';
import type { EnvelopeModel } from '../../src/openwop/services/ai-envelope-model.js';
import type { AiEnvelopeRequest } from '../../src/openwop/services/ai-envelope-surface.js';
import {
  HOLD,
  HostFixture,
  closedAfterEach,
  expectValidCapabilities,
  expectValidEvents,
  oneNode,
  runToTerminal,
  startUntilAsked,
  waitForEvent,
} from './service-test-kit.js';

/** Answers from a list, in order; records what it was asked. */
class ListModel implements EnvelopeModel {
  readonly name = 'list';
  calls: Array<readonly { role: string; content: string | null }[]> = [];
  constructor(private readonly answers: Array<string | Error>) {}
  async next(req: Parameters<EnvelopeModel['next']>[0]) {
    this.calls.push(req.messages);
    const a = this.answers[this.calls.length - 1] ?? 'out of answers';
    if (a instanceof Error) throw a;
    return { kind: 'final' as const, text: a };
  }
}

const SUMMARY = {
  type: 'object',
  required: ['title'],
  properties: { title: { type: 'string' } },
  additionalProperties: false,
};
const ok = (title = 'T'): string => JSON.stringify({ type: 'vendor.mhs.summary', payload: { title } });

const fixtures = closedAfterEach<HostFixture>();

const request = (extra: Partial<AiEnvelopeRequest> = {}): AiEnvelopeRequest => ({
  systemPrompt: 'Summarise.',
  envelopeType: 'vendor.mhs.summary',
  userMessage: 'pumps',
  idempotencyKey: 'k1',
  ...extra,
});

const genNode: NodeModule = {
  typeId: 'test.generate',
  requires: ['aiEnvelope'],
  async execute(ctx) {
    const reqs = (ctx.node.config.requests as AiEnvelopeRequest[] | undefined) ?? [request()];
    const results = [];
    for (const r of reqs) results.push(await ctx.aiEnvelope!.generate(r));
    if (ctx.node.config.hold) await ctx.interrupt(HOLD);
    return { outputs: { results, hasAwait: 'await' in ctx.aiEnvelope! } };
  },
};

async function start(model: () => EnvelopeModel, config: Record<string, unknown> = {}, clarificationRounds?: number) {
  const fx = new HostFixture(async () => ({
    families: [
      createAiEnvelopeFamily({
        model: model(),
        envelopes: { 'vendor.mhs.summary': SUMMARY },
        ...(clarificationRounds !== undefined ? { clarificationRounds } : {}),
      }),
    ],
    nodes: [genNode],
  }));
  fixtures.push(fx);
  await fx.open();
  await fx.host.catalog.register(oneNode('gen', { typeId: 'test.generate', config }));
  return fx;
}

async function runGen(fx: HostFixture) {
  const r = await runToTerminal(fx.host, 'gen');
  const done = r.events.find((e) => e.type === 'node.completed');
  const outputs = done?.payload.outputs as { results: Array<Record<string, unknown>>; hasAwait: boolean } | undefined;
  return { ...r, outputs };
}

describe('aiEnvelope family (RFC 0144 §aiEnvelope)', () => {
  it('advertises the catalog and limits it enforces, without await; the document validates', async () => {
    const fx = await start(() => new ListModel([ok()]));
    const doc = expectValidCapabilities(fx.host);
    expect(doc.aiEnvelope).toEqual({ supported: true });
    expect(doc.supportedEnvelopes).toEqual([
      'clarification.request',
      'schema.request',
      'schema.response',
      'error',
      'vendor.mhs.summary',
    ]);
    expect(doc.limits).toMatchObject({
      clarificationRounds: 2,
      schemaRounds: 2,
      envelopesPerTurn: 1,
      maxNodeExecutions: 1000,
    });
    const r = await runGen(fx);
    expect(r.status).toBe('completed');
    expect(r.outputs!.hasAwait).toBe(false);
  });

  it('returns an envelope valid against ai-envelope.schema.json with a deterministic id', async () => {
    const model = new ListModel([ok('Pumps')]);
    const fx = await start(() => model);
    const r = await runGen(fx);
    expect(r.status).toBe('completed');
    const res = r.outputs!.results[0]!;
    expect(res).toMatchObject({ envelopeType: 'vendor.mhs.summary', payload: { title: 'Pumps' }, model: 'list' });
    expect(openwopSchemas().check(schemaId('ai-envelope'), res.envelope)).toEqual([]);
    expect(res.envelope).toMatchObject({ envelopeId: res.envelopeId, nodeId: 'n', meta: { source: 'ai-generation' } });
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]![0]!.content).toContain('Summarise.');
    expect(model.calls[0]![1]).toEqual({ role: 'user', content: 'pumps' });
  });

  it('re-asks after an invalid answer and succeeds within schemaRounds', async () => {
    const model = new ListModel([
      'not json',
      JSON.stringify({ type: 'vendor.mhs.summary', payload: { nope: 1 } }),
      ok(),
    ]);
    const fx = await start(() => model);
    const r = await runGen(fx);
    expect(r.status).toBe('completed');
    expect(model.calls).toHaveLength(3);
  });

  it('fails envelope_invalid once schemaRounds invalid answers are spent (ai-envelope.md §Schema-violation path)', async () => {
    const model = new ListModel(['x', 'y', 'z', ok()]);
    const r = await runGen(await start(() => model));
    expect([r.status, r.code]).toEqual(['failed', 'envelope_invalid']);
    expect(model.calls).toHaveLength(3);
  });

  it('answers schema.request with the payload schema of the asked kind', async () => {
    const model = new ListModel([
      JSON.stringify({ type: 'schema.request', payload: { envelopeType: 'vendor.mhs.summary' } }),
      ok(),
    ]);
    const r = await runGen(await start(() => model));
    expect(r.status).toBe('completed');
    expect(JSON.parse(String(model.calls[1]!.at(-1)!.content).replace(/^[^{]*/, ''))).toEqual(SUMMARY);
  });

  const clarify = JSON.stringify({
    type: 'clarification.request',
    payload: { questions: [{ id: 'q', question: 'Which pump?' }] },
  });

  it('lifts a clarification.request to a clarification interrupt and feeds the answer back, across a restart', async () => {
    const models: ListModel[] = [];
    const fx = await start(() => {
      const m = new ListModel(models.length ? [ok('P1')] : [clarify]);
      models.push(m);
      return m;
    });
    const { runId, asked } = await startUntilAsked(fx.host, 'gen');
    expect(asked.payload).toMatchObject({ kind: 'clarification', data: { questions: [{ id: 'q' }] } });
    const answer = { resumeValue: { answers: [{ id: 'q', answer: 'P1' }] } };
    expect(await fx.restartAndResolve(runId, answer)).toBe('completed');
    await expectValidEvents(fx.host, runId);
    expect(models.map((m) => m.calls.length)).toEqual([1, 1]);
    expect(String(models[1]!.calls[0]!.at(-1)!.content)).toContain('"answer":"P1"');
  });

  it('a node holding on its own approval after a clarified generation still waits for it after a restart', async () => {
    const CLARIFY = JSON.stringify({
      type: 'clarification.request',
      payload: { questions: [{ id: 'q', question: 'Which pump?' }] },
    });
    const model = new ListModel([CLARIFY, ok('P2')]);
    const fx = await start(() => model, { hold: true });
    const { runId, asked } = await startUntilAsked(fx.host, 'gen');
    expect(asked.payload.kind).toBe('clarification');
    await fx.host.runs.resolveInterrupt(runId, 'n', { answers: { q: 'P2' } }, { principal: 't' });
    const approval = await waitForEvent(
      fx.host,
      runId,
      (e) => e.type === 'interrupt.requested' && e.payload.kind === 'approval',
    );
    // Restarted while the approval is pending: the clarification's resolution must not stand in for it.
    await fx.reopen();
    let pending = fx.host.runs.pendingInterrupts().find((p) => p.runId === runId);
    while (!pending && (await fx.host.runs.snapshot(runId)).status.startsWith('waiting')) {
      await new Promise((r) => setTimeout(r, 5));
      pending = fx.host.runs.pendingInterrupts().find((p) => p.runId === runId);
    }
    expect(pending).toMatchObject({ kind: 'approval', key: approval.payload.key });
    await fx.host.runs.resolveInterrupt(runId, 'n', { action: 'accept' }, { principal: 't' });
    expect(await fx.host.runs.waitTerminal(runId)).toBe('completed');
    expect(model.calls).toHaveLength(2);
  });

  it('a clarification.request past clarificationRounds breaches (cap.breached, cap_breached)', async () => {
    const model = new ListModel([clarify]);
    const r = await runGen(await start(() => model, {}, 0));
    expect([r.status, r.code]).toEqual(['failed', 'cap_breached']);
    expect(r.events.find((e) => e.type === 'cap.breached')!.payload).toMatchObject({ kind: 'clarification', limit: 0 });
  });

  it('returns an error envelope as a result and logs it', async () => {
    const model = new ListModel([
      JSON.stringify({ type: 'error', payload: { code: 'ambiguous_intent', message: 'unclear' } }),
    ]);
    const r = await runGen(await start(() => model));
    expect(r.status).toBe('completed');
    expect(r.outputs!.results[0]).toMatchObject({ envelopeType: 'error', payload: { code: 'ambiguous_intent' } });
    expect(r.events.some((e) => e.type === 'log.appended' && e.payload.level === 'error')).toBe(true);
  });

  it.each([
    ['an unknown envelope kind', { requests: [request({ envelopeType: 'vendor.other' })] }, 'unknown_envelope_kind', 0],
    [
      'a request without idempotencyKey',
      { requests: [{ systemPrompt: 's', envelopeType: 'error' }] },
      'validation_error',
      0,
    ],
    [
      'one idempotencyKey for two requests',
      { requests: [request(), request({ userMessage: 'valves' })] },
      'envelope_correlation_conflict',
      1,
    ],
  ])('refuses %s with a stable code', async (_what, config, code, calls) => {
    const model = new ListModel([ok(), ok()]);
    const r = await runGen(await start(() => model, config));
    expect([r.status, r.code]).toEqual(['failed', code]);
    expect(model.calls).toHaveLength(calls);
  });

  it('maps a failing model to provider_unavailable', async () => {
    const r = await runGen(await start(() => new ListModel([new Error('boom')])));
    expect([r.status, r.code]).toEqual(['failed', 'provider_unavailable']);
  });

  it('a host restarted mid-node returns the recorded envelope without calling the model again', async () => {
    const models: ListModel[] = [];
    const fx = await start(
      () => {
        const m = new ListModel(models.length ? ['second model must not be asked'] : ['bad', ok('Once')]);
        models.push(m);
        return m;
      },
      { hold: true },
    );
    const { runId } = await startUntilAsked(fx.host, 'gen');
    expect(await fx.restartAndResolve(runId, { action: 'accept' })).toBe('completed');
    const events = await expectValidEvents(fx.host, runId);
    expect(models.map((m) => m.calls.length)).toEqual([2, 0]);
    const out = events.find((e) => e.type === 'node.completed')!.payload.outputs as {
      results: Array<{ payload: unknown; envelopeId: string }>;
    };
    expect(out.results[0]!.payload).toEqual({ title: 'Once' });
  });

  it('runs on the scripted provider of src/ai (the embedded default model)', async () => {
    const script = parseAgentScript({ turns: [{ final: ok('Scripted') }] });
    const r = await runGen(await start(() => new ScriptedProvider(script)));
    expect(r.status).toBe('completed');
    expect(r.outputs!.results[0]).toMatchObject({ payload: { title: 'Scripted' }, model: 'scripted' });
  });
});
