// Guarantees (issue 15; ai-envelope.md §Envelope-completion criteria, RFC 0032/0033): under `serve --model`,
// ctx.aiEnvelope.generate asks a real provider for structured output with its native feature (Chat Completions
// `response_format: {type: "json_schema"}`; Messages: one forced tool whose input is the envelope), over a local
// server speaking each wire format (streamed; no network). A valid first answer is accepted; an invalid one is
// re-asked with a corrective fragment (envelope.retry.attempted, reason schema-violation) and the repair accepted; a
// model that never answers the shape ends envelope_invalid after limits.schemaRounds retries
// (envelope.retry.exhausted, cap.breached {kind: schema}; ai-envelope.md §Schema-violation path); a refusal (OpenAI `refusal` delta / Anthropic stop_reason refusal) is not retried
// (envelope.refusal, envelope_refusal); a truncated answer (finish_reason length / stop_reason max_tokens) is
// re-asked with the same conversation and twice the budget (envelope.truncated, retry reason truncation). A request
// naming `provider` + `model` runs on that model (never `scripted`); so does a run whose `RunOptions.configurable.model`
// names one (run-options.md §Reserved keys), below a request's own. Every event validates against the run-event
// schemas.
import { rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmCacheKey } from '../../src/ai/llm-cache-key.js';
import { chatCacheKeyInput, messagesCacheKeyInput } from '../../src/ai/providers/wire-cache-key.js';
import { buildServiceFamilies } from '../../src/cli/service-families.js';
import type { NodeModule } from '../../src/openwop/node-registry.js';
import type { RunEvent } from '../../src/openwop/types.js';
import {
  HostFixture,
  clock,
  closedAfterEach,
  expectValidEvents,
  oneNode,
  runToTerminal,
  tempDbFile,
} from '../openwop/service-test-kit.js';
import { anStream } from '../helpers/anthropic-fixtures.js';
import { oaStream } from '../helpers/openai-fixtures.js';
import { startWireServer } from '../helpers/wire-server.js';
import type { WireReply, WireServer } from '../helpers/wire-server.js';

const KIND = 'vendor.mhs.summary';
const SUMMARY = {
  type: 'object',
  required: ['title'],
  properties: { title: { type: 'string' } },
  additionalProperties: false,
};
const genNode: NodeModule = {
  typeId: 'test.generate',
  requires: ['aiEnvelope'],
  async execute(ctx) {
    const r = await ctx.aiEnvelope!.generate({
      systemPrompt: 'Summarise.',
      envelopeType: KIND,
      userMessage: 'pumps',
      idempotencyKey: 'k1',
      ...(ctx.node.config.named as object | undefined),
    });
    return { outputs: { payload: r.payload, usage: r.usage } };
  },
};

interface Wire {
  name: string;
  model: string;
  env: Record<string, string>;
  /** An answer that is this JSON text (usage [10, out]). */
  answer(json: string, out?: number): WireReply;
  truncated(json: string, out: number): WireReply;
  refusal(): WireReply;
  /** The request asks for the envelope through the provider's structured output. */
  expectStructured(body: Record<string, unknown>): void;
  budget(body: Record<string, unknown>): unknown;
}

const WIRES: Wire[] = [
  {
    name: 'openai-compatible',
    model: 'lab-llm',
    env: { OPENAI_API_KEY: 'sk-env-test-0123456789abcdef' },
    answer: (json, out = 7) =>
      oaStream({ model: 'lab-llm', pieces: [json.slice(0, 9), json.slice(9)], usage: [10, out] }),
    truncated: (json, out) => oaStream({ model: 'lab-llm', pieces: [json], finish: 'length', usage: [10, out] }),
    refusal: () => oaStream({ model: 'lab-llm', refusal: "I can't help with that.", usage: [10, 5] }),
    expectStructured(body) {
      expect(body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'envelope' } });
      const schema = (body.response_format as { json_schema: { schema: Record<string, unknown> } }).json_schema.schema;
      expect(schema).toMatchObject({ type: 'object', properties: { type: { enum: [KIND, 'error'] } } });
      expect(JSON.stringify(schema)).toContain('"title"');
      expect(body.tools).toBeUndefined();
    },
    budget: (body) => body.max_tokens,
  },
  {
    name: 'anthropic',
    model: 'claude-test',
    env: { ANTHROPIC_API_KEY: 'sk-ant-env-test-0123456789abcdef' },
    answer: (json, out = 7) =>
      anStream({
        model: 'claude-test',
        uses: [{ id: 'toolu_01', name: 'envelope', jsonPieces: [json.slice(0, 9), json.slice(9)] }],
        usage: [10, out],
      }),
    truncated: (json, out) =>
      anStream({
        model: 'claude-test',
        uses: [{ id: 'toolu_01', name: 'envelope', jsonPieces: [json.slice(0, 12)] }],
        stop: 'max_tokens',
        usage: [10, out],
      }),
    refusal: () => anStream({ model: 'claude-test', pieces: ['I cannot help.'], stop: 'refusal', usage: [10, 5] }),
    expectStructured(body) {
      expect(body.tool_choice).toEqual({ type: 'tool', name: 'envelope' });
      const tools = body.tools as Array<{ name: string; input_schema: Record<string, unknown> }>;
      expect(tools.map((t) => t.name)).toEqual(['envelope']);
      expect(tools[0]!.input_schema).toMatchObject({ type: 'object', properties: { type: { enum: [KIND, 'error'] } } });
      expect(body.system).toContain('Summarise.');
    },
    budget: (body) => body.max_tokens,
  },
];

const ok = (title = 'Pumps'): string => JSON.stringify({ type: KIND, payload: { title } });
const bad = JSON.stringify({ type: KIND, payload: { heading: 'Pumps' } });
const ofType = (events: readonly RunEvent[], type: string) => events.filter((e) => e.type === type);

const envelopesFile = `${tempDbFile('mhs-envelopes-')}.json`;
beforeAll(() => writeFileSync(envelopesFile, JSON.stringify({ [KIND]: SUMMARY })));
afterAll(() => rmSync(envelopesFile, { force: true }));
const fixtures = closedAfterEach<HostFixture>();
const servers = closedAfterEach<WireServer>();

/** Runs the generating node against a new server answering `replies` in order. */
async function run(w: Wire, ...replies: WireReply[]) {
  return runNamed(w, undefined, ...replies);
}

/** {@link run} with the request naming `named` (`{provider, model}`). */
async function runNamed(w: Wire, named: Record<string, string> | undefined, ...replies: WireReply[]) {
  return runWith(w, { named }, ...replies);
}

/** {@link run} with the request naming `named` and the run created with `RunOptions.configurable`. */
async function runWith(
  w: Wire,
  o: { named?: Record<string, string> | undefined; configurable?: Record<string, unknown> },
  ...replies: WireReply[]
) {
  const named = o.named;
  const srv = await startWireServer(replies);
  servers.push(srv);
  const base = w.name === 'anthropic' ? srv.url : `${srv.url}/v1`;
  const fx = new HostFixture(async (db) => ({
    families: await buildServiceFamilies(
      { model: `${w.name}:${w.model}`, baseUrl: base, modelRetries: 0, envelopes: envelopesFile },
      db,
      clock,
      () => undefined,
      undefined,
      { env: w.env },
    ),
    nodes: [genNode],
  }));
  fixtures.push(fx);
  await fx.open();
  await fx.host.catalog.register(oneNode('gen', { typeId: 'test.generate', config: named ? { named } : {} }));
  const r = o.configurable
    ? await (async () => {
        const { run: created } = await fx.host.runs.createRun(
          { workflowId: 'gen', configurable: o.configurable },
          { principal: 't' },
        );
        await fx.host.runs.waitTerminal(created.runId);
        return {
          events: await expectValidEvents(fx.host, created.runId),
          status: (await fx.host.store.getRun(created.runId))!.status,
        };
      })()
    : await runToTerminal(fx.host, 'gen');
  const failed = r.events.find((e) => e.type === 'node.failed');
  const nodeCode = (failed?.payload.error as { code?: string } | undefined)?.code;
  const done = r.events.find((e) => e.type === 'node.completed');
  return {
    ...r,
    nodeCode,
    outputs: done?.payload.outputs as Record<string, unknown> | undefined,
    requests: [...srv.requests],
  };
}

describe.each(WIRES)('ctx.aiEnvelope.generate on $name (structured output)', (w) => {
  it('accepts a valid first answer asked for through the native structured output', async () => {
    const r = await run(w, w.answer(ok()));
    expect(r.status).toBe('completed');
    expect(r.outputs).toMatchObject({ payload: { title: 'Pumps' }, usage: { inputTokens: 10, outputTokens: 7 } });
    expect(r.requests).toHaveLength(1);
    w.expectStructured(r.requests[0]!.body);
    expect(ofType(r.events, 'envelope.retry.attempted')).toHaveLength(0);
  });

  it('re-asks an invalid answer with a corrective fragment and accepts the repair', async () => {
    const r = await run(w, w.answer(bad), w.answer(ok('Fixed')));
    expect(r.status).toBe('completed');
    expect(r.outputs).toMatchObject({ payload: { title: 'Fixed' } });
    expect(r.requests).toHaveLength(2);
    const second = JSON.stringify(r.requests[1]!.body);
    expect(second).toContain('Your answer was refused');
    expect(second).toContain('/payload');
    expect(w.budget(r.requests[1]!.body)).toEqual(w.budget(r.requests[0]!.body));
    expect(ofType(r.events, 'envelope.retry.attempted').map((e) => e.payload)).toEqual([
      expect.objectContaining({ attempt: 2, reason: 'schema-violation' }),
    ]);
    expect(ofType(r.events, 'provider.usage')).toHaveLength(2);
    // Each recorded answer carries the LLM cache key of the request the server received (replay.md §A).
    const recorded = ofType(r.events, 'log.appended')
      .map((e) => e.payload.fields as { checkpoint?: string; cacheKey?: string } | undefined)
      .filter((f) => /:turn:\d+$/.test(f?.checkpoint ?? ''));
    expect(recorded.map((f) => f!.cacheKey)).toEqual(
      r.requests.map((q) =>
        llmCacheKey(w.name === 'anthropic' ? messagesCacheKeyInput(q.body) : chatCacheKeyInput(w.name, q.body)),
      ),
    );
  });

  it('ends envelope_invalid with cap.breached {kind: schema} when the model never answers the shape', async () => {
    const r = await run(w, w.answer(bad), w.answer(bad), w.answer('{"type": "nope"}'), w.answer(ok()));
    expect([r.status, r.nodeCode]).toEqual(['failed', 'envelope_invalid']);
    expect(r.requests).toHaveLength(3); // limits.schemaRounds = 2 retries
    expect(ofType(r.events, 'envelope.retry.attempted')).toHaveLength(2);
    expect(ofType(r.events, 'envelope.retry.exhausted').map((e) => e.payload)).toEqual([
      expect.objectContaining({ totalAttempts: 3 }),
    ]);
    expect(ofType(r.events, 'cap.breached').map((e) => e.payload)).toEqual([
      expect.objectContaining({ kind: 'schema', limit: 2 }),
    ]);
  });

  it('does not retry a refusal: envelope.refusal, envelope_refusal', async () => {
    const r = await run(w, w.refusal(), w.answer(ok()));
    expect([r.status, r.nodeCode]).toEqual(['failed', 'envelope_refusal']);
    expect(r.requests).toHaveLength(1);
    expect(ofType(r.events, 'envelope.refusal').map((e) => e.payload)).toEqual([
      { nodeId: 'n', provider: w.name, model: w.model, refusalText: null },
    ]);
    expect(JSON.stringify(r.events)).not.toMatch(/help/);
    expect(ofType(r.events, 'envelope.retry.attempted')).toHaveLength(0);
    expect(ofType(r.events, 'envelope.retry.exhausted').map((e) => e.payload)).toEqual([
      expect.objectContaining({ finalReason: 'refusal', totalAttempts: 1 }),
    ]);
  });

  it('re-asks a truncated answer with the same conversation and twice the budget', async () => {
    const r = await run(w, w.truncated(ok(), 40), w.answer(ok()));
    expect(r.status).toBe('completed');
    expect(r.requests).toHaveLength(2);
    const [a, b] = r.requests.map((q) => q.body as Record<string, unknown>);
    expect(b!.messages).toEqual(a!.messages); // no corrective fragment
    expect(w.budget(b!)).toBe(80);
    expect(ofType(r.events, 'envelope.truncated').map((e) => e.payload)).toEqual([
      { nodeId: 'n', provider: w.name, model: w.model, stopReason: 'max_tokens', outputTokenCount: 40 },
    ]);
    expect(ofType(r.events, 'envelope.retry.attempted').map((e) => e.payload)).toEqual([
      expect.objectContaining({ attempt: 2, reason: 'truncation' }),
    ]);
  });

  it('gives up on answers that stay truncated: envelope_truncation_unrecoverable', async () => {
    const r = await run(w, w.truncated(ok(), 40), w.truncated(ok(), 80), w.truncated(ok(), 160));
    expect([r.status, r.nodeCode]).toEqual(['failed', 'envelope_truncation_unrecoverable']);
    expect(r.requests.map((q) => w.budget(q.body))).toEqual([r.requests[0]!.body.max_tokens, 80, 160]);
    expect(ofType(r.events, 'envelope.retry.exhausted').map((e) => e.payload)).toEqual([
      expect.objectContaining({ finalReason: 'truncation', totalAttempts: 3 }),
    ]);
    expect(ofType(r.events, 'cap.breached').map((e) => e.payload)).toEqual([
      expect.objectContaining({ kind: 'schema' }),
    ]);
  });
});

describe('a generation naming its own model (request provider + model)', () => {
  const w = WIRES[0]!;
  it('runs on that model of the provider, metered under it', async () => {
    const r = await runNamed(w, { provider: 'openai-compatible', model: 'other-llm' }, w.answer(ok()));
    expect(r.status).toBe('completed');
    expect(r.requests.map((q) => q.body.model)).toEqual(['other-llm']);
    expect(ofType(r.events, 'provider.usage').map((e) => e.payload.model)).toEqual(['other-llm']);
  });

  it('refuses the scripted provider (a file path) with provider_unavailable and no request', async () => {
    const r = await runNamed(w, { provider: 'scripted', model: '/etc/hosts' }, w.answer(ok()));
    expect([r.status, r.nodeCode]).toEqual(['failed', 'provider_unavailable']);
    expect(r.requests).toHaveLength(0);
  });
});

describe('a run naming its model (RunOptions.configurable.model, run-options.md §Reserved keys)', () => {
  const w = WIRES[0]!;
  it.each([
    ['a model id of the host provider', 'run-llm'],
    ['a --model spelling', 'openai-compatible:run-llm'],
  ])('runs its generations on it over the host default: %s', async (_how, value) => {
    const r = await runWith(w, { configurable: { model: value } }, w.answer(ok()));
    expect(r.status).toBe('completed');
    expect(r.requests.map((q) => q.body.model)).toEqual(['run-llm']);
    expect(ofType(r.events, 'provider.usage').map((e) => e.payload.model)).toEqual(['run-llm']);
  });

  it('a request naming its own model still wins over the run', async () => {
    const named = { provider: 'openai-compatible', model: 'node-llm' };
    const r = await runWith(w, { named, configurable: { model: 'run-llm' } }, w.answer(ok()));
    expect(r.requests.map((q) => q.body.model)).toEqual(['node-llm']);
  });

  it('a run naming the scripted provider fails provider_unavailable, nothing sent', async () => {
    const r = await runWith(w, { configurable: { model: 'scripted:/etc/hosts' } }, w.answer(ok()));
    expect([r.status, r.nodeCode]).toEqual(['failed', 'provider_unavailable']);
    expect(r.requests).toHaveLength(0);
  });
});
