// Guarantees (RFC 0026 §B, capabilities.schema.json providerUsage) for the multi-agent runtime, on a real host over
// a real SQLite file wired as `serve` wires it (buildServiceFamilies): a dispatched manifest agent played by the
// scripted model (`--agent-packs` + `--agent-script`) appends one valid `provider.usage` per model turn to its child
// run (a tool-call turn + a final turn = 2), the declared usage verbatim and the estimate deterministic across runs;
// ctx.agentRuntime meters each delegation choice and consensus vote once, and a host restarted mid-node asks no model
// and appends no event again. The host advertises providerUsage only with a scripted model (`--ai-script` or
// `--agent-packs` + `--agent-script`), not for the echo stand-in of `--agent-packs` alone, whose calls emit nothing.
// The dispatched agent's usage is in its child run's metrics.openwopCost, not in the parent's (per-run rollup). The
// dispatch and restart cases run on every store backend (SQLite always, PostgreSQL when MHS_TEST_PG_URL is set).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScriptedProvider, parseAgentScript } from '../../src/ai/index.js';
import { buildServiceFamilies } from '../../src/cli/service-families.js';
import type { FamilyFlags } from '../../src/cli/service-families.js';
import type { NodeModule } from '../../src/openwop/node-registry.js';
import { createAgentRuntimeFamily } from '../../src/openwop/services/agent-runtime-family.js';
import type { EnvelopeModel } from '../../src/openwop/services/ai-envelope-model.js';
import type { RunEvent } from '../../src/openwop/types.js';
import { BACKENDS, sqliteBackend } from '../ledger/helpers.js';
import type { Backend } from '../ledger/helpers.js';
import { ANALYST, dispatchWorkflow, packsDir } from './manifest-kit.js';
import type { HostFixture } from './service-test-kit.js';
import {
  HOLD,
  clock,
  closedAfterEach,
  expectValidCapabilities,
  expectValidEvents,
  oneNode,
  startUntilAsked,
} from './service-test-kit.js';
import { fixtureOn, summed, usageOf } from './usage-kit.js';

const DECLARED = { inputTokens: 300, outputTokens: 12 };

function scriptFile(script: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'mhs-usage-')), 'script.json');
  writeFileSync(file, JSON.stringify(script));
  return file;
}

const fixtures = closedAfterEach<{ close(): Promise<void> }>();

/** A host with the families `serve` builds from `flags`, on a fresh store of `backend`. */
async function serveLike(flags: FamilyFlags, backend: Backend = sqliteBackend) {
  const fx = await fixtureOn(backend, fixtures, async (db) => ({
    families: await buildServiceFamilies(flags, db, clock, () => undefined),
  }));
  await fx.open();
  return fx;
}

/**
 * Dispatches the analyst once; the child run's provider.usage events (every event of parent and child validated).
 * The parent asks no model itself: it has no event and no metrics; the child's metrics sum its events.
 */
async function dispatchAnalyst(fx: HostFixture, id: string): Promise<RunEvent[]> {
  await fx.host.catalog.register(dispatchWorkflow(id, [ANALYST], 'S-1'));
  const { run } = await fx.host.runs.createRun({ workflowId: id }, { principal: 't' });
  expect(await fx.host.runs.waitTerminal(run.runId)).toBe('completed');
  expect(usageOf(await expectValidEvents(fx.host, run.runId))).toEqual([]);
  const children = await fx.host.store.childRuns(run.runId);
  expect(children).toHaveLength(1);
  const events = await expectValidEvents(fx.host, children[0]!.runId);
  const metrics = async (runId: string) => ((await fx.host.runs.snapshot(runId)) as { metrics?: unknown }).metrics;
  const sum = summed(events);
  expect([await metrics(run.runId), await metrics(children[0]!.runId)]).toEqual([
    undefined,
    {
      openwopCost: {
        tokens: { input: sum.inputTokens, output: sum.outputTokens },
        provider: 'scripted',
        model: 'lab-agent-model',
      },
    },
  ]);
  return usageOf(events);
}

describe.each(BACKENDS)('provider.usage (RFC 0026 §B) for the multi-agent runtime on $name', (backend) => {
  it('a dispatched manifest agent: one event per model turn, declared usage verbatim, estimates deterministic', async () => {
    const agentScript = scriptFile({
      model: 'lab-agent-model',
      turns: [
        { text: 'Echoing.', tool_calls: [{ tool: 'openwop:echo', arguments: { q: 1 } }], usage: DECLARED },
        { final: JSON.stringify({ verdict: 'pass' }) },
      ],
    });
    const fx = await serveLike({ agentPacks: packsDir(), agentScript }, backend);
    const doc = expectValidCapabilities(fx.host);
    expect(doc.providerUsage).toEqual({ supported: true, costEstimates: false });
    const first = await dispatchAnalyst(fx, 'usage-dispatch-1');
    const payloads = first.map((e) => {
      const { traceId: _t, ...rest } = e.payload;
      return rest;
    });
    expect(payloads).toHaveLength(2);
    expect(payloads[0]).toEqual({
      provider: 'scripted',
      model: 'lab-agent-model',
      ...DECLARED,
      totalTokens: 312,
      nodeId: first[0]!.nodeId,
    });
    const est = payloads[1] as { inputTokens: number; outputTokens: number; totalTokens: number };
    expect(payloads[1]).toMatchObject({ provider: 'scripted', model: 'lab-agent-model' });
    expect(est.inputTokens).toBeGreaterThan(0);
    expect(est.outputTokens).toBe(Math.ceil(Buffer.byteLength('{"verdict":"pass"}') / 4));
    expect(est.totalTokens).toBe(est.inputTokens + est.outputTokens);
    // The same conversation is metered the same (replay determinism of the counts).
    const again = await dispatchAnalyst(fx, 'usage-dispatch-2');
    expect(again.map((e) => [e.payload.inputTokens, e.payload.outputTokens])).toEqual(
      first.map((e) => [e.payload.inputTokens, e.payload.outputTokens]),
    );
  });

  it('ctx.agentRuntime meters each delegation choice and consensus vote once; a restart mid-node adds none', async () => {
    const MANIFESTS = [
      { agentId: 'vendor.mhs.lab.planner', persona: 'Planner', modelClass: 'reasoning', systemPrompt: 'You plan.' },
      { agentId: 'vendor.mhs.lab.critic', persona: 'Critic', modelClass: 'reasoning', systemPrompt: 'You critique.' },
    ];
    const inner = new ScriptedProvider(
      parseAgentScript({
        turns: [
          {
            final: JSON.stringify({ agentId: MANIFESTS[0]!.agentId, confidence: 0.9, vote: 'accept' }),
            usage: DECLARED,
          },
        ],
      }),
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
    const refs = MANIFESTS.map((m) => ({ agentId: m.agentId }));
    const node: NodeModule = {
      typeId: 'test.agents',
      requires: ['agentRuntime'],
      async execute(ctx) {
        const rt = ctx.agentRuntime!;
        const d = await rt.delegate({ idempotencyKey: 'd1', task: 'plan the run', agents: refs } as never);
        const c = await rt.consensus({
          idempotencyKey: 'c1',
          participants: refs,
          proposal: { plan: 'A' },
          threshold: 1,
          maxRounds: 1,
        } as never);
        await ctx.interrupt(HOLD);
        return { outputs: { d, c } };
      },
    };
    const fx = await fixtureOn(backend, fixtures, async (db) => ({
      families: [createAgentRuntimeFamily({ db, clock, model, manifests: MANIFESTS, manifestRuntimeMet: true })],
      nodes: [node],
    }));
    await fx.open();
    expect(expectValidCapabilities(fx.host).providerUsage).toEqual({ supported: true, costEstimates: false });
    await fx.host.catalog.register(oneNode('usage-agents', { typeId: 'test.agents' }));
    const { runId } = await startUntilAsked(fx.host, 'usage-agents');
    expect(await fx.restartAndResolve(runId, { action: 'accept' })).toBe('completed');
    const events = await expectValidEvents(fx.host, runId);
    const usage = usageOf(events);
    expect([calls, usage.length]).toEqual([3, 3]); // 1 delegation choice + 2 votes
    expect(usage.every((e) => e.payload.inputTokens === 300 && e.payload.outputTokens === 12)).toBe(true);
    // Each vote's usage is in the batch with its recorded answer and its agent.decided.
    const decided = events.filter((e) => e.type === 'agent.decided');
    expect(decided).toHaveLength(2);
    for (const d of decided) expect(events[d.sequence - 2]?.type).toBe('provider.usage');
  });
});

describe('providerUsage advertisement for the multi-agent runtime (capabilities.schema.json providerUsage)', () => {
  it('the echo stand-in (--agent-packs alone) is no provider: not advertised, no event', async () => {
    const fx = await serveLike({ agentPacks: packsDir() });
    const doc = expectValidCapabilities(fx.host);
    expect([doc.agentRuntime, doc.providerUsage]).toEqual([{ supported: true }, undefined]);
    // The echo answers with the task itself (the analyst's return schema refuses it): the agent ran, unmetered.
    await fx.host.catalog.register(dispatchWorkflow('usage-echo', [ANALYST], 'S-1'));
    const { run } = await fx.host.runs.createRun({ workflowId: 'usage-echo' }, { principal: 't' });
    await fx.host.runs.waitTerminal(run.runId);
    const children = await fx.host.store.childRuns(run.runId);
    expect(children).toHaveLength(1);
    const all = [
      ...(await expectValidEvents(fx.host, run.runId)),
      ...(await expectValidEvents(fx.host, children[0]!.runId)),
    ];
    expect(all.some((e) => e.type === 'node.started' && e.nodeId === 'agent')).toBe(true);
    expect(usageOf(all)).toEqual([]);
  });

  it('--ai-script alone advertises providerUsage (the aiEnvelope model is metered)', async () => {
    const aiScript = scriptFile({ turns: [{ final: '{}' }] });
    const doc = expectValidCapabilities((await serveLike({ aiScript })).host);
    expect(doc.providerUsage).toEqual({ supported: true, costEstimates: false });
  });
});
