// Guarantees RFC 0041 Phase 4 replay determinism on a real host (SQLite file) through the REST surface, with the two
// vendored fixtures: (§C, conformance-phase4-nondet-tool) a `mode: replay` fork's event sequence equals the source's
// up to and including the `nondeterministic: true` node's `node.completed`, and that node is replayed from the log,
// never re-executed; (§B, conformance-phase4-replay-divergence) when the replayed `core.ai.structuredOutput` call is
// answered with a refusal where the source's answer was valid (or the reverse), the replay appends
// `replay.divergedAtRefusal` with both envelope kinds and fails `replay_diverged_at_refusal` (422 on REST), never
// substituting either answer; the mock provider is programmed through `POST /v1/host/sample/test/mock-ai/program`.
// Every event validates against the run-event schemas. The §A cache-key recipe is built (src/ai/llm-cache-key.ts, over
// the published vectors), but the host (with the agents family, so it advertises multiAgent.executionModel) does not
// claim `replayDeterminism` (an executionModel v4 claim): a replay's log still differs from its source's, under the
// public scenario's normalisation, in `causationId` and the fork's lineage fields (replay-observable-sequence.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentsFamily } from '../../src/openwop/agents/agents-family.js';
import type { RunEvent } from '../../src/openwop/types.js';
import { createTokenStore } from '../../src/policy/tokens.js';
import { buildApp } from '../../src/server/app.js';
import { statusFor } from '../../src/server/errors.js';
import { HostFixture, clock, expectValidCapabilities, expectValidEvents } from './service-test-kit.js';

const NONDET = 'conformance-phase4-nondet-tool';
const DIVERGENCE = 'conformance-phase4-replay-divergence';
const NODE = 'structured-call';

const fx = new HostFixture(() => Promise.resolve({ families: [agentsFamily()] }));
let app: Awaited<ReturnType<typeof buildApp>>['app'];
let auth: Record<string, string>;

beforeAll(async () => {
  const host = await fx.open();
  const tokens = createTokenStore(fx.db, clock);
  auth = { authorization: `Bearer ${(await tokens.add('phase4', 'client')).token}` };
  ({ app } = await buildApp({ host, auth: tokens, clock, testSeams: true }));
});

afterAll(async () => {
  await app.close();
  await fx.close();
});

async function program(entries: unknown[]): Promise<void> {
  const res = await app.inject({
    method: 'POST',
    url: '/v1/host/sample/test/mock-ai/program',
    headers: auth,
    payload: { nodeId: NODE, program: entries },
  });
  expect([res.statusCode, res.json()]).toEqual([200, { nodeId: NODE, entries: entries.length }]);
}

/** Starts `workflowId` over REST and waits for its end: id, status, error code, schema-checked events. */
async function runOver(workflowId: string) {
  const res = await app.inject({ method: 'POST', url: '/v1/runs', headers: auth, payload: { workflowId } });
  expect(res.statusCode).toBe(201);
  return settled((res.json() as { runId: string }).runId);
}

async function forkReplay(sourceRunId: string) {
  const res = await app.inject({
    method: 'POST',
    url: `/v1/runs/${sourceRunId}:fork`,
    headers: auth,
    payload: { mode: 'replay' },
  });
  expect(res.statusCode).toBe(201);
  return settled((res.json() as { runId: string }).runId);
}

async function settled(runId: string) {
  const status = await fx.host.runs.waitTerminal(runId);
  await expectValidEvents(fx.host, runId);
  const snap = (await app.inject({ method: 'GET', url: `/v1/runs/${runId}`, headers: auth })).json() as {
    error?: { code?: string; details?: Record<string, unknown> };
  };
  const events = (await app.inject({ method: 'GET', url: `/v1/runs/${runId}/events`, headers: auth })).json() as {
    events: RunEvent[];
  };
  return { runId, status, error: snap.error, events: events.events };
}

/**
 * An event without what legitimately differs between a run and its replay: ids minted per run (event, run and
 * causation ids), clock readings (`timestamp`, `durationMs`) and the fork's lineage (`run.started`
 * `metadata.forkedFrom`, `node.completed` `replayedFrom`).
 */
function observable(e: RunEvent): unknown {
  const payload = { ...e.payload } as Record<string, unknown>;
  delete payload.durationMs;
  delete payload.replayedFrom;
  if (e.type === 'run.started' && typeof payload.metadata === 'object' && payload.metadata !== null) {
    const { forkedFrom: _drop, ...metadata } = payload.metadata as Record<string, unknown>;
    payload.metadata = metadata;
  }
  return { type: e.type, nodeId: e.nodeId, sequence: e.sequence, payload };
}

/** The events up to and including `nodeId`'s `node.completed`. */
function prefixThrough(events: readonly RunEvent[], nodeId: string): RunEvent[] {
  const at = events.findIndex((e) => e.type === 'node.completed' && e.nodeId === nodeId);
  expect(at).toBeGreaterThanOrEqual(0);
  return events.slice(0, at + 1);
}

describe('RFC 0041 §D: advertisement', () => {
  it('does not claim multiAgent.executionModel.replayDeterminism (a v4 claim §C does not yet meet here); the document validates', () => {
    const doc = expectValidCapabilities(fx.host) as { multiAgent?: { executionModel?: Record<string, unknown> } };
    expect(doc.multiAgent?.executionModel?.replayDeterminism).toBeUndefined();
  });
});

describe('RFC 0041 §C: observable-output-sequence determinism (conformance-phase4-nondet-tool)', () => {
  it('both Phase 4 fixtures are registered', async () => {
    const list = (await app.inject({ method: 'GET', url: '/v1/workflows', headers: auth })).json() as {
      workflows: Array<{ id: string }>;
    };
    expect(list.workflows.map((w) => w.id)).toEqual(expect.arrayContaining([NONDET, DIVERGENCE]));
  });

  it('the replay fork repeats the source event sequence through the nondeterministic node, replayed from the log', async () => {
    await program([{ valid: true }, { valid: false }]);
    const src = await runOver(NONDET);
    expect(src.status).toBe('completed');
    const rep = await forkReplay(src.runId);
    expect(rep.status).toBe('completed');

    const a = prefixThrough(src.events, 'nondet-tool');
    const b = prefixThrough(rep.events, 'nondet-tool');
    expect(b.map(observable)).toEqual(a.map(observable));
    expect(a.map((e) => e.type)).toEqual(['run.started', 'node.started', 'node.completed']);
    // Not re-executed: its completion is the source's recorded one.
    const done = b.at(-1)!;
    const original = a.at(-1)!;
    expect(done.payload.replayedFrom).toEqual({ sourceRunId: src.runId, eventId: original.eventId, execution: 1 });

    // The structured call asked the model again; the answer kind matched (valid), so the source's answer stands.
    const out = (es: RunEvent[]) => es.find((e) => e.type === 'node.completed' && e.nodeId === NODE)?.payload.outputs;
    expect(out(src.events)).toEqual({ output: { valid: true } });
    expect(out(rep.events)).toEqual({ output: { valid: true } });
    expect(rep.events.some((e) => e.type === 'replay.divergedAtRefusal')).toBe(false);
  });

  it('unprogrammed, the mock answers the minimal schema instance and the run completes', async () => {
    await program([]);
    const src = await runOver(NONDET);
    expect(src.status).toBe('completed');
    const done = src.events.find((e) => e.type === 'node.completed' && e.nodeId === NODE);
    expect(done?.payload.outputs).toEqual({ output: { valid: true } });
  });
});

describe('RFC 0041 §B: replay-divergence-at-refusal (conformance-phase4-replay-divergence)', () => {
  it('original valid, replay refusal: replay.divergedAtRefusal and replay_diverged_at_refusal, nothing substituted', async () => {
    await program([{ valid: true }, { stopReason: 'safety', refusalText: 'I cannot help with that.' }]);
    const src = await runOver(DIVERGENCE);
    expect(src.status).toBe('completed');
    const original = src.events.find((e) => e.type === 'node.completed' && e.nodeId === NODE)!;

    const rep = await forkReplay(src.runId);
    expect(rep.status).toBe('failed');
    expect(rep.error?.code).toBe('replay_diverged_at_refusal');
    expect(statusFor(rep.error!.code!)).toBe(422);
    const diverged = rep.events.filter((e) => e.type === 'replay.divergedAtRefusal');
    expect(diverged.map((e) => e.payload)).toEqual([
      {
        sourceRunId: src.runId,
        atSequence: original.sequence,
        originalEventId: original.eventId,
        nodeId: NODE,
        originalEnvelopeKind: 'valid',
        replayEnvelopeKind: 'refusal',
      },
    ]);
    // The error details agree with the event; the node never completed in the replay.
    expect(rep.error?.details).toMatchObject({ originalEnvelopeKind: 'valid', replayEnvelopeKind: 'refusal' });
    // The refusal text is never written to the log (no redaction pipeline for it here).
    expect(JSON.stringify(rep.events)).not.toContain('I cannot help');
    expect(rep.events.filter((e) => e.nodeId === NODE).map((e) => e.type)).toEqual([
      'node.started',
      'log.appended',
      'replay.divergedAtRefusal',
      'node.failed',
    ]);
  });

  it('original refusal, replay valid: the symmetric divergence fails the replay too', async () => {
    await program([
      { mode: 'refusal', refusalReason: 'policy' },
      { mode: 'envelope', envelope: { valid: true } },
    ]);
    const src = await runOver(DIVERGENCE);
    expect([src.status, src.error?.code]).toEqual(['failed', 'envelope_refusal']);
    expect(src.events.filter((e) => e.type === 'envelope.refusal').map((e) => e.payload)).toEqual([
      { nodeId: NODE, provider: 'mock', model: 'mock-mini', refusalText: null },
    ]);

    const rep = await forkReplay(src.runId);
    expect([rep.status, rep.error?.code]).toEqual(['failed', 'replay_diverged_at_refusal']);
    const [d] = rep.events.filter((e) => e.type === 'replay.divergedAtRefusal');
    expect(d?.payload).toMatchObject({ originalEnvelopeKind: 'refusal', replayEnvelopeKind: 'valid' });
  });

  it('same kind on replay (valid, another value): the source outcome is replayed, no divergence', async () => {
    await program([{ content: '{"valid":true}' }, { content: '{"valid":false}' }]);
    const src = await runOver(DIVERGENCE);
    const rep = await forkReplay(src.runId);
    expect(rep.status).toBe('completed');
    const done = rep.events.find((e) => e.type === 'node.completed' && e.nodeId === NODE);
    expect(done?.payload.outputs).toEqual({ output: { valid: true } });
    expect(rep.events.some((e) => e.type === 'replay.divergedAtRefusal')).toBe(false);
  });

  it('an answer that misses outputSchema fails the node envelope_invalid', async () => {
    await program([{ valid: 'yes' }]);
    const src = await runOver(DIVERGENCE);
    expect([src.status, src.error?.code]).toEqual(['failed', 'envelope_invalid']);
  });
});

describe('POST /v1/host/sample/test/mock-ai/program', () => {
  it('refuses a bad body (validation_error, nothing changed) and an anonymous caller', async () => {
    const cases: unknown[] = [{}, { nodeId: '', program: [] }, { nodeId: NODE }, { nodeId: NODE, program: [1] }];
    for (const payload of cases) {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/host/sample/test/mock-ai/program',
        headers: auth,
        payload: payload as Record<string, unknown>,
      });
      expect([res.statusCode, (res.json() as { error: string }).error], JSON.stringify(payload)).toEqual([
        400,
        'validation_error',
      ]);
    }
    const anon = await app.inject({
      method: 'POST',
      url: '/v1/host/sample/test/mock-ai/program',
      payload: { nodeId: NODE, program: [] },
    });
    expect([anon.statusCode, (anon.json() as { error: string }).error]).toEqual([401, 'unauthorized']);
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json', headers: auth })).json() as {
      paths: Record<string, unknown>;
    };
    expect(Object.keys(doc.paths)).toContain('/v1/host/sample/test/mock-ai/program');
  });
});
