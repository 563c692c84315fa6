// Real models stream into the run (stream-modes.md `messages`; the `output.chunk` payload the mock provider extension
// writes): a node's model call through ctx.aiEnvelope, on the official OpenAI and Anthropic SDKs against a local
// server speaking each public streaming wire format, appends the streamed text as `output.chunk` events of that node
// when the call ends: their chunks joined are the model's answer, exactly one is `isLast` (the last), carrying
// `finishReason` and the server's own token counts, and all precede the node's completion; a refused answer (OpenAI
// `content_filter`, Anthropic `stop_reason: refusal`) leaves no chunk and its text is nowhere in the log
// (envelope-refusal-no-prompt-leak). The run's store is a real SQLite file.
import { describe, expect, it } from 'vitest';
import { buildServiceFamilies } from '../../src/cli/service-families.js';
import { HostFixture, clock, closedAfterEach, oneNode, runToTerminal } from '../openwop/service-test-kit.js';
import { anStream } from '../helpers/anthropic-fixtures.js';
import { oaStream } from '../helpers/openai-fixtures.js';
import type { WireReply } from '../helpers/wire-server.js';
import { genNode, useModelServer } from './envelope-generate-kit.js';

const model = useModelServer();
const fixtures = closedAfterEach<HostFixture>();

const TITLE = 'Pumps, valves and the flow controller of the second bench, checked against the morning run';
const ANSWER = JSON.stringify({ type: 'vendor.mhs.summary', payload: { title: TITLE } });
/** The answer as a model streams it: small pieces, a few characters each. */
const PIECES = ANSWER.match(/.{1,9}/gs)!;

describe.each([
  {
    name: 'OpenAI Chat Completions',
    model: 'openai-compatible:lab-llm',
    baseUrl: () => `${model.server().url}/v1`,
    env: { OPENAI_API_KEY: 'sk-stream-test-0123456789abcdef' },
    reply: (): WireReply => oaStream({ model: 'lab-llm', pieces: PIECES, usage: [321, 17] }),
    refused: (): WireReply =>
      oaStream({
        model: 'lab-llm',
        pieces: ['I will repeat ', 'the prompt: pumps'],
        finish: 'content_filter',
        usage: [9, 4],
      }),
  },
  {
    name: 'Anthropic Messages',
    model: 'anthropic:claude-lab',
    baseUrl: () => model.server().url,
    env: { ANTHROPIC_API_KEY: 'sk-ant-stream-test-0123456789abcdef' },
    reply: (): WireReply => anStream({ model: 'claude-lab', pieces: PIECES, usage: [321, 17] }),
    refused: (): WireReply =>
      anStream({
        model: 'claude-lab',
        pieces: ['I will repeat ', 'the prompt: pumps'],
        stop: 'refusal',
        usage: [9, 4],
      }),
  },
])('a streamed answer on $name', (p) => {
  async function host(): Promise<HostFixture> {
    const fx = new HostFixture(async (db) => ({
      families: await buildServiceFamilies(
        { model: p.model, baseUrl: p.baseUrl(), modelRetries: 0, envelopes: model.envelopesFile },
        db,
        clock,
        () => undefined,
        undefined,
        { env: p.env },
      ),
      nodes: [genNode],
    }));
    fixtures.push(fx);
    await fx.open();
    await fx.host.catalog.register(oneNode('gen', { typeId: 'test.generate' }));
    return fx;
  }

  it('is appended when the call ends: output.chunk events that join to the answer, one last chunk with the usage', async () => {
    model.server().reply(p.reply());
    const { status, events } = await runToTerminal((await host()).host, 'gen');
    expect(status).toBe('completed');

    const chunks = events.filter((e) => e.type === 'output.chunk');
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    const payloads = chunks.map(
      (e) => e.payload as { nodeId: string; chunk: string; isLast: boolean; meta: Record<string, unknown> },
    );
    expect(payloads.map((c) => c.chunk).join('')).toBe(ANSWER);
    expect(payloads.map((c) => c.isLast)).toEqual([...Array(chunks.length - 1).fill(false), true]);
    expect(new Set(payloads.map((c) => c.nodeId))).toEqual(new Set(['n'])); // oneNode's node
    expect(payloads.every((c) => c.meta.model === p.model)).toBe(true);
    expect(payloads.at(-1)!.meta).toMatchObject({
      finishReason: 'stop',
      usage: { inputTokens: 321, outputTokens: 17 },
    });
    const completed = events.find((e) => e.type === 'node.completed' && e.nodeId === 'n')!;
    expect(chunks.every((e) => e.sequence < completed.sequence)).toBe(true);
  });

  it('a refused answer leaves no chunk: its streamed text never reaches the log', async () => {
    model.server().reply(p.refused());
    const { status, events } = await runToTerminal((await host()).host, 'gen');
    expect(status).toBe('failed');
    expect(events.filter((e) => e.type === 'output.chunk')).toEqual([]);
    expect(JSON.stringify(events)).not.toContain('the prompt: pumps');
  });
});
