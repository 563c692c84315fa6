// Guarantees (RFC 0070 agents.manifestRuntime, RFC 0003 installAgents §B/§C/§D, RFC 0002 §A14, SR-1): on a real
// host over a real SQLite file, agent packs are installed from a folder into a durable AgentRegistry: each bad pack
// is refused with its stable code while the good ones install; systemPromptRef is resolved and pinned at install
// (pack file, or a prompt-library ref pinned to its latest version); a restarted host has the same registry without
// the folder; re-installing a pack version with other content is refused. A supervisor's next-worker naming an
// installed agent dispatches it on core.dispatch as a child run: the agent gets only its allowlisted tools, a call
// outside the allowlist is refused `tool_not_allowed` (status forbidden) and recorded, the result is harvested
// through the outputMapping; task and return payloads are validated against the handoff schemas; no secret
// plaintext reaches any event of parent or child. Every event validates; the capabilities document advertises
// agents.manifestRuntime and agentRuntime together and validates.
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedProvider, parseAgentScript } from '../../src/ai/index.js';
import { createManifestRuntimeFamily } from '../../src/openwop/agents/manifest-runtime-family.js';
import { agentWorkflowId } from '../../src/openwop/agents/manifest-runtime-family.js';
import type { ManifestRuntimeFamily } from '../../src/openwop/agents/manifest-runtime-family.js';
import type { AgentModel } from '../../src/openwop/agents/manifest-agent-node.js';
import { agentsFamily } from '../../src/openwop/agents/agents-family.js';
import { createAgentRuntimeFamily } from '../../src/openwop/services/agent-runtime-family.js';
import { BUILTIN_PROMPTS_DIR } from '../../src/openwop/services/prompt-library-family.js';
import { PromptStore } from '../../src/openwop/services/prompt-store.js';
import { openwopSchemas, schemaId } from '../../src/openwop/schemas.js';
import type { RunEvent } from '../../src/openwop/types.js';
import { HostFixture, clock } from './service-test-kit.js';
import { ANALYST, EXPECTED_REFUSALS, SECRET, STRICT, WRITER, dispatchWorkflow, packsDir } from './manifest-kit.js';

/** Scripted models by the agent's system prompt (each a real ScriptedProvider). */
const analystScript = new ScriptedProvider(
  parseAgentScript({
    turns: [
      {
        text: 'Checking the sample with my tools.',
        tool_calls: [
          { tool: 'openwop:echo', arguments: { note: `key ${SECRET}` } },
          { tool: 'vendor.test:credential' },
          { tool: 'mcp:fs/delete', arguments: { path: '/' } },
        ],
      },
      { final: JSON.stringify({ verdict: 'pass', note: `used ${SECRET}` }) },
    ],
  }),
);
const strictScript = new ScriptedProvider(parseAgentScript({ turns: [{ final: '{"verdict": "maybe"}' }] }));
/** Tool names the model was offered, by the first word of the system prompt. */
const offered = new Map<string, string[]>();
/** Turns asked of the analyst's model, by turn index; `hold` (when set) answers instead of the script. */
const asked: number[] = [];
let hold: ((turn: number) => Promise<never> | undefined) | undefined;
let credentialCalls = 0;
const model: AgentModel = {
  name: 'by-prompt',
  next: (req) => {
    const turn = req.messages.filter((m) => m.role === 'assistant').length;
    if (String(req.messages[0]?.content).startsWith('ANALYST')) {
      asked[turn] = (asked[turn] ?? 0) + 1;
      const held = hold?.(turn);
      if (held) return held;
    }
    const system = req.messages[0]?.role === 'system' ? String(req.messages[0].content) : '';
    offered.set(
      system.split(':')[0]!,
      req.tools.map((t) => t.name),
    );
    return (system.startsWith('STRICT') ? strictScript : analystScript).next(req as never);
  },
};

const fx = new HostFixture(async (db) => {
  const prompts = new PromptStore(db, clock);
  await prompts.init();
  await prompts.seedDir(BUILTIN_PROMPTS_DIR);
  manifest = await createManifestRuntimeFamily({
    db,
    clock,
    ...(dir ? { packsDir: dir } : {}),
    prompts,
    model,
    tools: new Map([
      ['openwop:echo', { description: 'echo', inputSchema: {}, call: (a) => Promise.resolve({ echo: a }) }],
      [
        'vendor.test:credential',
        {
          description: 'cred',
          inputSchema: {},
          call: () => {
            credentialCalls++;
            return Promise.resolve({ token: SECRET });
          },
        },
      ],
      [
        'mcp:fs/delete',
        { description: 'never called', inputSchema: {}, call: () => Promise.reject(new Error('called')) },
      ],
    ]),
    secrets: () => [SECRET],
  });
  const runtime = createAgentRuntimeFamily({
    db,
    clock,
    model,
    manifests: manifest.registry.list().map((a) => a.manifest),
    manifestRuntimeMet: true,
  });
  return { families: [agentsFamily(), manifest, runtime] };
});
let manifest: ManifestRuntimeFamily;
let dir: string | undefined;

async function run(workflow: ReturnType<typeof dispatchWorkflow>): Promise<{ runId: string; status: string }> {
  await fx.host.catalog.register(workflow);
  const { run } = await fx.host.runs.createRun({ workflowId: workflow.id }, { principal: 't' });
  return { runId: run.runId, status: await fx.host.runs.waitTerminal(run.runId) };
}

async function allEvents(runId: string): Promise<RunEvent[]> {
  const children = await fx.host.store.childRuns(runId);
  const out = await fx.host.store.events(runId);
  for (const c of children) out.push(...(await fx.host.store.events(c.runId)));
  for (const e of out)
    expect({ type: e.type, issues: openwopSchemas().checkEvent(e) }).toEqual({ type: e.type, issues: [] });
  return out;
}

beforeAll(async () => {
  dir = packsDir();
  await fx.open();
});
afterAll(() => fx.close());

describe('RFC 0070 agent-manifest runtime', () => {
  it('RFC 0003: installs the good packs, refuses each bad one with its code, pins system prompts', () => {
    expect(manifest.installed).toEqual(['vendor.acme.lab@1.0.0', 'vendor.acme.lib@1.0.0']);
    const codes = Object.fromEntries(
      manifest.refused.map((r) => [r.pack.endsWith('x-schema') ? 'x-schema' : r.pack, r.code]),
    );
    expect(codes).toEqual(EXPECTED_REFUSALS);
    expect(manifest.registry.list().map((a) => a.manifest.agentId)).toEqual([ANALYST, STRICT, WRITER]);
    expect(manifest.registry.get(ANALYST)!.systemPromptSource).toBe('file:prompts/analyst.md');
    expect(manifest.registry.get(WRITER)!.systemPromptSource).toBe('prompt:conformance.prompt.writer-system@1.0.0');
    expect(manifest.registry.get(WRITER)!.systemPrompt).toMatch(/technical writer/);
  });

  it('advertises agents.manifestRuntime with agentRuntime; the document validates', () => {
    const doc = fx.host.capabilities() as Record<string, Record<string, unknown>>;
    expect(openwopSchemas().check(schemaId('capabilities'), doc)).toEqual([]);
    expect(doc.agents!.manifestRuntime).toEqual({ supported: true, handoffValidation: true, installScope: 'host' });
    expect(doc.agentRuntime).toEqual({ supported: true });
  });

  it('dispatches a manifest agent on core.dispatch with its toolAllowlist enforced and no secret in any event', async () => {
    const r = await run(dispatchWorkflow('dispatch-analyst', [ANALYST], 'S-1'));
    expect(r.status).toBe('completed');
    const [child] = await fx.host.store.childRuns(r.runId);
    expect([child!.workflowId, child!.status]).toEqual([agentWorkflowId(ANALYST), 'completed']);
    const events = await allEvents(r.runId);
    const agentEvents = events.filter((e) => e.type.startsWith('agent.') && e.payload.agentId === ANALYST);
    expect(agentEvents.map((e) => e.type)).toEqual([
      'agent.reasoned',
      'agent.toolCalled',
      'agent.toolReturned',
      'agent.toolCalled',
      'agent.toolReturned',
      'agent.toolCalled',
      'agent.toolReturned',
      'agent.decided',
    ]);
    const returned = agentEvents.filter((e) => e.type === 'agent.toolReturned').map((e) => e.payload);
    expect(returned.map((p) => [p.toolName, p.status, (p.error as { code?: string } | undefined)?.code])).toEqual([
      ['openwop:echo', 'ok', undefined],
      ['vendor.test:credential', 'ok', undefined],
      ['mcp:fs/delete', 'forbidden', 'tool_not_allowed'],
    ]);
    const phases = events.filter((e) => e.type === 'core.workflowChain.event').map((e) => e.payload.phase);
    expect(phases).toEqual(['dispatch.began', 'dispatch.succeeded', 'child.completed', 'output.harvested']);
    expect(offered.get('ANALYST')).toEqual(['openwop:echo', 'vendor.test:credential']);
    expect(JSON.stringify(events)).not.toContain(SECRET);
    const verdict = (await fx.host.runs.snapshot(r.runId)).variables.verdict as Record<string, unknown>;
    expect(verdict).toEqual({ verdict: 'pass', note: 'used [redacted]' });
  });

  it('handoffValidation: a task or a result outside the handoff schemas fails the child, recorded by dispatch', async () => {
    const badTask = await run(dispatchWorkflow('dispatch-bad-task', [ANALYST], 42));
    const badReturn = await run(dispatchWorkflow('dispatch-bad-return', [STRICT], 'S-2'));
    for (const [r, code] of [
      [badTask, 'handoff_task_invalid'],
      [badReturn, 'handoff_return_invalid'],
    ] as const) {
      expect(r.status).toBe('completed');
      const [child] = await fx.host.store.childRuns(r.runId);
      expect(child!.status).toBe('failed');
      const events = await allEvents(r.runId);
      const failed = events.find((e) => e.type === 'core.workflowChain.event' && e.payload.phase === 'child.failed');
      expect((failed!.payload.error as { code: string }).code).toBe(code);
    }
    expect(offered.get('STRICT')).toEqual([]); // no toolAllowlist: no tools (host policy, agent-manifest.schema.json)
  });

  it('a restarted host has the same registry without the folder; dispatch still works', async () => {
    dir = undefined;
    await fx.reopen();
    expect(manifest.installed).toEqual([]);
    expect(manifest.registry.list().map((a) => `${a.manifest.agentId}:${a.systemPromptSource}`)).toEqual([
      `${ANALYST}:file:prompts/analyst.md`,
      `${STRICT}:inline`,
      `${WRITER}:prompt:conformance.prompt.writer-system@1.0.0`,
    ]);
    const r = await run(dispatchWorkflow('dispatch-after-restart', [ANALYST], 'S-3'));
    expect(r.status).toBe('completed');
    expect((await fx.host.runs.snapshot(r.runId)).variables.verdict).toEqual({
      verdict: 'pass',
      note: 'used [redacted]',
    });
  });

  it('a host stopped mid-agent resumes the dispatched agent without asking again or repeating a tool call', async () => {
    let release!: (err: Error) => void;
    let blocked!: () => void;
    const isBlocked = new Promise<void>((r) => (blocked = r));
    hold = (turn) =>
      turn === 1
        ? new Promise<never>((_, reject) => {
            release = reject;
            blocked();
          })
        : undefined;
    asked.length = 0;
    credentialCalls = 0;
    const wf = dispatchWorkflow('dispatch-restart-mid-agent', [ANALYST], 'S-4');
    await fx.host.catalog.register(wf);
    const { run: started } = await fx.host.runs.createRun({ workflowId: wf.id }, { principal: 't' });
    await isBlocked;
    hold = undefined;
    const reopening = fx.reopen(); // halts the run actors at once; the held model call then fails, unrecorded
    release(new Error('host stopped'));
    await reopening;
    expect(await fx.host.runs.waitTerminal(started.runId)).toBe('completed');
    expect([asked, credentialCalls]).toEqual([[1, 2], 1]);
    const events = await allEvents(started.runId);
    expect(events.filter((e) => e.type === 'agent.toolReturned')).toHaveLength(3);
    expect(JSON.stringify(events)).not.toContain(SECRET);
    expect((await fx.host.runs.snapshot(started.runId)).variables.verdict).toEqual({
      verdict: 'pass',
      note: 'used [redacted]',
    });
  });

  it('the same pack version with other content is refused agent_pack_conflict; the same content is idempotent', async () => {
    const again = mkdtempSync(join(tmpdir(), 'mhs-packs-again-'));
    cpSync(join(packsDir(), 'a-lab'), join(again, 'a-lab'), { recursive: true });
    const same = await createManifestRuntimeFamily({ db: fx.db, clock, packsDir: again, model });
    expect([same.installed, same.refused]).toEqual([['vendor.acme.lab@1.0.0'], []]);
    writeFileSync(join(again, 'a-lab/prompts/analyst.md'), 'ANALYST: a different prompt.');
    const changed = await createManifestRuntimeFamily({ db: fx.db, clock, packsDir: again, model });
    expect(changed.refused.map((r) => [r.pack, r.code])).toEqual([['vendor.acme.lab', 'agent_pack_conflict']]);
    expect(changed.registry.get(ANALYST)!.systemPrompt).toMatch(/lab samples/);
  });
});
