// Guarantees (issue 15, HOST-020, 033): the agent loop driven by a real provider (openai-compatible and anthropic,
// through their official SDKs, each against a local server speaking its API's wire format; no network) over a real
// thermostat simulator and SQLite store: the model's capability tool call goes through the governed path (the ledger
// has the tool_call, the command.intent and the receipt), the next request to the model carries the FULL receipt the
// ledger holds as the tool result, the model's answer ends the run, the server's token counts are the run's usage and
// one `provider.usage` ledger entry per turn (provider, model, counts, the request's LLM cache key), and
// the API key is nowhere in the store file, the transcript or the exported evidence package. A run whose signal
// aborts during a model call ends `aborted`.
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { runAgent } from '../../src/ai/agent-loop.js';
import type { AgentResult } from '../../src/ai/agent-loop.js';
import type { ModelProvider } from '../../src/ai/model-provider.js';
import { createModelProvider } from '../../src/ai/providers/create-model-provider.js';
import { parseModelSpec } from '../../src/ai/providers/model-spec.js';
import type { Engine } from '../../src/engine/index.js';
import { openArtifacts } from '../../src/ledger/artifacts.js';
import type { Artifacts } from '../../src/ledger/artifacts.js';
import { exportPackage } from '../../src/ledger/index.js';
import { capabilityToolName } from '../../src/mhs/tool-names.js';
import { connectStdio, openStore, startEngine } from '../engine/harness.js';
import type { Store } from '../engine/harness.js';
import { anStream } from '../helpers/anthropic-fixtures.js';
import { oaStream } from '../helpers/openai-fixtures.js';
import { startWireServer } from '../helpers/wire-server.js';
import type { WireReply, WireServer } from '../helpers/wire-server.js';

const SETPOINT = capabilityToolName('thermostat', 'cap.thermal.setpoint.v1');
const KEY = 'sk-live-like-9b8a7c6d5e4f3a2b1c0d9e8f7a6b5c4d';
const clock = new RealClock();

interface Case {
  name: string;
  spec: string;
  env: Record<string, string>;
  /** Base URL of the server for this provider's SDK. */
  base: (url: string) => string;
  replies: WireReply[];
  /** The tool result content (JSON text) the second request carries. */
  toolResult: (body: Record<string, unknown>) => string;
  /** The tool names offered in the first request. */
  tools: (body: Record<string, unknown>) => string[];
}

const CASES: Case[] = [
  {
    name: 'openai-compatible',
    spec: 'openai-compatible:llama3.1',
    env: { OPENAI_API_KEY: KEY },
    base: (url) => `${url}/v1`,
    replies: [
      oaStream({
        model: 'llama3.1',
        pieces: ['Setting the chamber.'],
        calls: [{ id: 'call_set', name: SETPOINT, argPieces: ['{"setpoint_c"', ':37}'] }],
        usage: [812, 31],
      }),
      oaStream({ model: 'llama3.1', pieces: ['The chamber ', 'is at 37 degC.'], usage: [1544, 12] }),
    ],
    toolResult: (b) => (b.messages as Array<{ role: string; content: string }>).find((m) => m.role === 'tool')!.content,
    tools: (b) => (b.tools as Array<{ function: { name: string } }>).map((t) => t.function.name),
  },
  {
    name: 'anthropic',
    spec: 'anthropic:claude-sonnet-4-5',
    env: { ANTHROPIC_API_KEY: KEY },
    base: (url) => url,
    replies: [
      anStream({
        model: 'claude-sonnet-4-5',
        pieces: ['Setting the chamber.'],
        uses: [{ id: 'toolu_set', name: SETPOINT, jsonPieces: ['{"setpoint_c"', ': 37}'] }],
        usage: [812, 31],
      }),
      anStream({ model: 'claude-sonnet-4-5', pieces: ['The chamber ', 'is at 37 degC.'], usage: [1544, 12] }),
    ],
    toolResult: (b) => {
      const last = (b.messages as Array<{ content: Array<{ type: string; content?: string }> }>).at(-1)!;
      return last.content.find((c) => c.type === 'tool_result')!.content!;
    },
    tools: (b) => (b.tools as Array<{ name: string }>).map((t) => t.name),
  },
];

let store: Store;
let artifacts: Artifacts;
let engine: Engine;
let srv: WireServer;
let outDir: string;

beforeAll(async () => {
  store = await openStore();
  artifacts = await openArtifacts(store.db, { clock });
  engine = await startEngine(store, { artifacts });
  await engine.attach(
    await connectStdio(
      'thermostat',
      ['--endpoint-id', 'mhs://test/model-thermo', '--time-scale', '20'],
      'mhs-model-thermo',
    ),
  );
  srv = await startWireServer();
  outDir = join(mkdtempSync(join(tmpdir(), 'mhs-model-agent-')), 'pkg');
});
afterAll(async () => {
  await engine?.stop();
  await store?.close();
  await srv?.close();
  if (outDir) rmSync(join(outDir, '..'), { recursive: true, force: true });
});

describe.each(CASES)('agent run with the $name provider over a real simulator', (c) => {
  let run: AgentResult;
  let provider: ModelProvider;

  beforeAll(async () => {
    srv.requests.length = 0;
    srv.reply(...c.replies);
    provider = createModelProvider(parseModelSpec(c.spec, { baseUrl: c.base(srv.url) }), c.env, { maxRetries: 0 });
    run = await runAgent({
      provider,
      engine,
      ledger: store.ledger,
      transcript: artifacts,
      clock,
      prompt: 'Bring the chamber to 37 degC.',
    });
  });

  test('the tool call goes through the governed path and the model sees the full receipt, then answers', async () => {
    expect(run).toMatchObject({ stopReason: 'final', final: 'The chamber is at 37 degC.', turns: 2 });
    expect(run.usage).toEqual({ inputTokens: 812 + 1544, outputTokens: 31 + 12 });
    const usage = (await store.ledger.range(0)).filter(
      (e) => e.kind === 'provider.usage' && e.agent_run_id === run.runId,
    );
    expect(usage.map((e) => [e.turn, e.input_tokens, e.output_tokens, e.total_tokens])).toEqual([
      [0, 812, 31, 843],
      [1, 1544, 12, 1556],
    ]);
    expect(usage[0]).toMatchObject({ provider: provider.meter!.provider, model: provider.meter!.model });
    // Each turn's entry carries its request's LLM cache key (a digest; test/ai/provider-cache-key.test.ts ties it
    // to the body the server received): two different requests, two keys.
    const keys = usage.map((e) => e.cache_key as string);
    expect(keys.every((k) => /^[0-9a-f]{64}$/.test(k)) && keys[0] !== keys[1]).toBe(true);
    expect(srv.requests).toHaveLength(2);
    expect(c.tools(srv.requests[0]!.body)).toContain(SETPOINT);

    const call = run.calls[0]!;
    expect(call).toMatchObject({ tool: SETPOINT, isError: false });
    const byCmd = await store.ledger.byCommand(call.commandId!);
    expect(byCmd.map((e) => e.kind)).toEqual(expect.arrayContaining(['tool_call', 'command.intent', 'receipt']));
    const receipt = byCmd.filter((e) => e.kind === 'receipt').at(-1)!.receipt as Record<string, unknown>;
    expect(receipt).toMatchObject({ status: 'completed', command_id: call.commandId });
    expect(byCmd.find((e) => e.kind === 'tool_call')).toMatchObject({ agent_run_id: run.runId, tool: SETPOINT });

    const sent = JSON.parse(c.toolResult(srv.requests[1]!.body)) as Record<string, unknown>;
    expect(sent).toEqual(call.result);
    expect(sent.receipt).toEqual(receipt);
  });

  test('the API key is sent to the server only: not in the store, the transcript or the export', async () => {
    const auth = srv.requests[0]!.headers;
    expect(`${auth.authorization ?? ''} ${(auth['x-api-key'] as string | undefined) ?? ''}`).toContain(KEY);
    for (const f of readdirSync(store.dir).filter((n) => n.startsWith('host.db')))
      expect(readFileSync(join(store.dir, f)).includes(KEY)).toBe(false);
    expect(JSON.stringify(await artifacts.transcript())).not.toContain(KEY);
    expect(JSON.stringify(await store.ledger.range(0))).not.toContain(KEY);
    const dir = `${outDir}-${c.name}`;
    await exportPackage({ db: store.db, outDir: dir, clock });
    for (const f of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
      const p = join(dir, f);
      if (statSync(p).isFile()) expect(readFileSync(p).includes(KEY)).toBe(false);
    }
    expect(JSON.stringify(provider)).not.toContain(KEY);
  });
});

describe('agent run cancelled through its AbortSignal', () => {
  test('a model call in flight is cancelled and the run ends aborted', async () => {
    srv.reply({ ...oaStream({ model: 'm', pieces: ['late'], usage: [1, 1] }), delayMs: 5000 });
    const seen = srv.requests.length;
    const ac = new AbortController();
    const provider = createModelProvider(
      parseModelSpec('openai-compatible:m', { baseUrl: `${srv.url}/v1` }),
      { OPENAI_API_KEY: KEY },
      { maxRetries: 0 },
    );
    const started = Date.now();
    const running = runAgent({ provider, engine, ledger: store.ledger, clock, prompt: 'x', signal: ac.signal });
    while (srv.requests.length === seen) await new Promise((r) => setImmediate(r));
    ac.abort();
    expect(await running).toMatchObject({ stopReason: 'aborted', final: null, turns: 0 });
    expect(Date.now() - started).toBeLessThan(4000);
  });
});
