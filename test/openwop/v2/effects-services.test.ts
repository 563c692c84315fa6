// Guarantees (OpenWOP v2 idempotency.md §"Layer 2: effect identity" and §"Witness", replay.md §Suppression), over real
// HTTP against `mhs-host serve --mcp-servers --ai-script` with a real MCP server over Streamable HTTP, on SQLite and,
// when MHS_TEST_PG_URL is set, PostgreSQL:
// - a run whose nodes make an MCP tool call and a model call lists both on `GET /runs/{runId}/effects` in call order,
//   valid against the vendored effect-ledger-projection schema: tenant-bound `effectId`s (the same on a re-read),
//   `attempt` 1, `keying: activity-recipe`, state `completed`, and nothing of the tool's arguments or result or the
//   model's answer;
// - a replay fork of that run performs neither effect again (the MCP server counts no new call, the fork's nodes
//   resolve from the source's recorded outcome) and its effect ledger is empty, the source's unchanged;
// - a serve process killed (SIGKILL) while the tool call is in flight leaves the effect `claimed`; after a restart the
//   resumed node does not send the call again (the server still counts one), fails `effect_outcome_unknown`, and the
//   record stays the same `claimed` effect, although the server's tools/list annotates that tool `readOnlyHint` and
//   `idempotentHint` (untrusted hints; the host assigns replay policy itself, RFC 0204 §D.11).
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies are read loosely in assertions */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../ledger/helpers.js';
import type { StoreHandle } from '../../ledger/helpers.js';
import { bareClient, startEchoHttp } from '../../helpers/mcp-echo.js';
import type { EchoHttp } from '../../helpers/mcp-echo.js';
import { makeToken, serve } from '../../server/serve-helpers.js';
import type { Served } from '../../server/serve-helpers.js';
import { call, pollToEnd, v2Problems } from './v2-kit.js';

const SECRET_ARG = 'argument-text-kept-out-of-the-ledger';
const SECRET_ANSWER = 'answer-text-kept-out-of-the-ledger';

const dir = mkdtempSync(join(tmpdir(), 'mhs-effects-svc-'));
function file(name: string, body: unknown): string {
  const p = join(dir, name);
  writeFileSync(p, JSON.stringify(body));
  return p;
}

/** An MCP tool call (`core.conformance.mcp-client`, the run's inputs name the tool) then a model call. */
const WORKFLOW = {
  id: 'effects-tool-then-model',
  name: 'effects-tool-then-model',
  version: '1',
  nodes: [
    {
      id: 'tool',
      typeId: 'core.conformance.mcp-client',
      name: 'tool',
      position: { x: 0, y: 0 },
      config: {},
      inputs: {},
    },
    {
      id: 'gen',
      typeId: 'local.ai.envelope',
      name: 'gen',
      position: { x: 1, y: 0 },
      config: { envelopeType: 'vendor.mhs.note', systemPrompt: 'Write a note.', userMessage: 'pumps' },
      inputs: {},
    },
  ],
  edges: [{ id: 'e0', sourceNodeId: 'tool', targetNodeId: 'gen' }],
  triggers: [{ id: 'manual', type: 'manual' }],
  variables: [
    { name: 'method', type: 'string', defaultValue: 'callTool' },
    { name: 'serverId', type: 'string', defaultValue: 'conformance' },
    { name: 'name', type: 'string', defaultValue: 'echo' },
    { name: 'arguments', type: 'object', defaultValue: { text: SECRET_ARG } },
  ],
  metadata: {},
  settings: {},
};

describe.each(BACKENDS)('MCP and model effects on the v2 effect ledger on $name', (backend) => {
  let h: StoreHandle;
  let echo: EchoHttp;
  let mcp: Client;
  let srv: Served | undefined;
  let args: string[];
  let token: string;

  /** How many `tools/call` requests the MCP server received for `tool`. */
  async function calls(tool: string): Promise<number> {
    const r = (await mcp.callTool({ name: 'calls' })) as { structuredContent?: { calls?: Record<string, number> } };
    return r.structuredContent?.calls?.[tool] ?? 0;
  }
  const effects = (statusUrl: string) => call(srv!.url, 'GET', `${statusUrl}/effects`, { token, version: '2' });
  const start = async (inputs: Record<string, unknown> = {}) => {
    const r = await call(srv!.url, 'POST', '/runs', {
      token,
      version: '2',
      body: { workflowId: WORKFLOW.id, inputs },
    });
    expect(r.status).toBe(201);
    return r.body;
  };

  beforeAll(async () => {
    h = await backend.fresh();
    echo = await startEchoHttp(['--hinted-hang']);
    mcp = await bareClient({ transport: 'streamable-http', url: echo.url });
    const script = file('script.json', {
      model: 'effects-model',
      turns: Array.from({ length: 6 }, () => ({
        final: JSON.stringify({ type: 'vendor.mhs.note', payload: { text: SECRET_ANSWER } }),
      })),
    });
    const envelopes = file('envelopes.json', {
      'vendor.mhs.note': { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
    });
    const servers = file('mcp.json', { servers: { conformance: { transport: 'streamable-http', url: echo.url } } });
    args = ['--no-workflows', '--mcp-servers', servers, '--ai-script', script, '--envelopes', envelopes];
    token = await makeToken(h.location, 'client');
    const op = await makeToken(h.location, 'operator', 'effects-op');
    srv = await serve(h.location, args);
    expect((await call(srv.url, 'POST', '/v1/workflows', { token: op, body: WORKFLOW })).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await srv?.stop();
    await mcp?.close();
    await echo?.stop();
    await h?.cleanup();
  });

  it('lists the tool call and the model call in order, completed, valid and content-free', async () => {
    const echoes = await calls('echo');
    const run = await start();
    const { last } = await pollToEnd(srv!.url, run.eventsUrl, token);
    expect(last.status).toBe('completed');
    expect(await calls('echo')).toBe(echoes + 1);
    const r = await effects(run.statusUrl);
    expect(r.status).toBe(200);
    expect(v2Problems('effect-ledger-projection', r.body)).toEqual([]);
    expect(r.body.runId).toBe(run.runId);
    expect(r.body.effects).toEqual([
      {
        effectId: expect.stringMatching(/^local\/eff-[0-9a-f]{32}$/),
        nodeId: 'tool',
        attempt: 1,
        keying: 'activity-recipe',
        state: 'completed',
        at: expect.any(String),
      },
      {
        effectId: expect.stringMatching(/^local\/eff-[0-9a-f]{32}$/),
        nodeId: 'gen',
        attempt: 1,
        keying: 'activity-recipe',
        state: 'completed',
        at: expect.any(String),
      },
    ]);
    expect(r.body.effects[0].effectId).not.toBe(r.body.effects[1].effectId);
    expect(Date.parse(r.body.effects[1].at)).toBeGreaterThanOrEqual(Date.parse(r.body.effects[0].at));
    expect(r.text).not.toContain(SECRET_ARG);
    expect(r.text).not.toContain(SECRET_ANSWER);
    expect((await effects(run.statusUrl)).body).toEqual(r.body);
  });

  it('a replay fork performs neither effect again: no new MCP call, an empty ledger, the source unchanged', async () => {
    const run = await start();
    expect((await pollToEnd(srv!.url, run.eventsUrl, token)).last.status).toBe('completed');
    const source = (await effects(run.statusUrl)).body.effects;
    expect(source.map((e: any) => [e.nodeId, e.state])).toEqual([
      ['tool', 'completed'],
      ['gen', 'completed'],
    ]);
    const echoes = await calls('echo');
    const fork = await call(srv!.url, 'POST', `/runs/${encodeURIComponent(run.runId)}:fork`, {
      token,
      version: '2',
      body: { mode: 'replay' },
    });
    expect(fork.status).toBe(201);
    const { events, last } = await pollToEnd(srv!.url, fork.body.eventsUrl, token);
    expect(last.status).toBe('completed');
    const done = events.filter((e: any) => e.type === 'node.completed' && ['tool', 'gen'].includes(e.nodeId));
    expect(done).toHaveLength(2);
    // The lineage (`replayedFrom`) has no seat in the closed v2 `nodeCompleted`; the v1 read of the fork carries it.
    const engineForkId = String(fork.body.runId).replace(/^local\/([a-z]+)-/, '$1_');
    const stored = (await call(srv!.url, 'GET', `/v1/runs/${engineForkId}/events/poll?timeout=0`, { token })).body
      .events;
    const resolved = stored.filter((e: any) => e.type === 'node.completed' && ['tool', 'gen'].includes(e.nodeId));
    expect(resolved).toHaveLength(2);
    for (const e of resolved) expect(e.payload.replayedFrom).toBeDefined();
    expect(await calls('echo')).toBe(echoes);
    const forked = await effects(`/runs/${encodeURIComponent(fork.body.runId)}`);
    expect(forked.body).toEqual({ runId: fork.body.runId, effects: [] });
    expect((await effects(run.statusUrl)).body.effects).toEqual(source);
  });

  it('killed mid-call: the effect stays claimed and, after a restart, is never sent again', async () => {
    // The server hints the tool read-only and idempotent; the hints are untrusted and change nothing (RFC 0204 §D.11:
    // replay policy is host-assigned, never copied from annotations; idempotency.md Layer 2; replay.md §Suppression 4).
    const listed = [];
    let cursor: string | undefined;
    do {
      const page = await mcp.listTools(cursor ? { cursor } : {});
      listed.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    expect(listed.find((t) => t.name === 'hang')?.annotations).toMatchObject({
      readOnlyHint: true,
      idempotentHint: true,
    });
    const run = await start({ name: 'hang', arguments: {} });
    let seen: any[] = [];
    while (!(seen.length === 1 && (await calls('hang')) === 1)) {
      const r = await effects(run.statusUrl);
      expect(v2Problems('effect-ledger-projection', r.body)).toEqual([]);
      seen = r.body.effects;
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(seen).toMatchObject([{ nodeId: 'tool', attempt: 1, state: 'claimed' }]);
    await srv!.kill();
    srv = await serve(h.location, args);
    // Until the resumed run ends, the server must never see the call again.
    for (;;) {
      expect(await calls('hang')).toBe(1);
      const s = await call(srv.url, 'GET', run.statusUrl, { token, version: '2' });
      if (['completed', 'failed', 'cancelled'].includes(s.body.status)) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    const { events, last } = await pollToEnd(srv.url, run.eventsUrl, token);
    expect(last.status).toBe('failed');
    const failed = events.find((e: any) => e.type === 'node.failed' && e.nodeId === 'tool');
    expect(failed?.payload.error.code).toBe('effect_outcome_unknown');
    expect(await calls('hang')).toBe(1);
    expect((await effects(run.statusUrl)).body.effects).toEqual(seen);
  });
});
