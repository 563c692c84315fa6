// RFC 0041 §C (observable-output-sequence determinism) checked the way the public
// `replay-observable-sequence-determinism` scenario checks it, over real HTTP against `mhs-host serve` on a SQLite
// file and, when MHS_TEST_PG_URL is set, PostgreSQL: run `conformance-phase4-nondet-tool` to its end, fork it
// `mode: replay` from 0, and compare both whole logs after removing, at any depth, the keys the scenario treats as
// volatile (fresh ids, the run id, per-region clocks). Exactly three fields the scenario does not strip still differ,
// so this host does not advertise executionModel 4: `causationId` (RFC 0002 §B: it names an event of the same log,
// and event ids are globally unique, so a fork's differs by construction), `run.started` `metadata.forkedFrom` and
// `node.completed` `replayedFrom` (the fork's lineage). The tests assert those three exactly (lineage names the
// source; causation is compared by the position of the event it names) and every other field byte for byte, and that
// a fork from the middle copies the source's prefix `[0, fromSeq)` byte for byte (replay.md §C.1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../ledger/helpers.js';
import type { StoreHandle } from '../ledger/helpers.js';
import type { RunEvent } from '../../src/openwop/types.js';
import { client, logProblems, makeToken, serve } from '../server/serve-helpers.js';
import type { Served } from '../server/serve-helpers.js';

const FIXTURE = 'conformance-phase4-nondet-tool';
const NONDET_NODE = 'nondet-tool';

/** What the scenario strips: ids minted per event or run, and clock fields (RFC 0036 §E). */
const VOLATILE = new Set(['eventId', 'runId', 'observedAt', 'timestamp', 'occurredAt', 'emittedAt', 'id']);

function stripVolatile(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripVolatile);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v as Record<string, unknown>)
      .filter(([k]) => !VOLATILE.has(k))
      .map(([k, x]) => [k, stripVolatile(x)]),
  );
}

/** Adds to `out` the dotted paths at which `a` and `b` differ (a key present on one side only differs at that key). */
function diffPaths(a: unknown, b: unknown, path: string, out: Set<string>): void {
  const obj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (obj(a) && obj(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)]))
      diffPaths(a[k], b[k], path ? `${path}.${k}` : k, out);
  } else if (JSON.stringify(a) !== JSON.stringify(b)) out.add(path);
}

/**
 * The scenario's stripped event, with what this host records beyond it checked and folded: `causationId` becomes the
 * sequence of the event it names in the same log, and, in a replay of `sourceRunId`, `run.started`
 * `metadata.forkedFrom` and `node.completed` `replayedFrom` must name that source and are then removed.
 */
function comparable(log: readonly RunEvent[], sourceRunId?: string): (e: RunEvent) => unknown {
  const seqOf = new Map(log.map((e) => [e.eventId, e.sequence]));
  return (e) => {
    const c = structuredClone(e) as RunEvent & { causedBySequence?: number };
    if (c.causationId !== undefined) {
      expect(
        seqOf.get(c.causationId),
        `${e.type} #${e.sequence} causationId names an event of its own log`,
      ).toBeLessThan(e.sequence);
      c.causedBySequence = seqOf.get(c.causationId);
      delete c.causationId;
    }
    const p = c.payload as { metadata?: Record<string, unknown>; replayedFrom?: unknown };
    if (sourceRunId !== undefined && e.type === 'run.started') {
      expect(p.metadata?.forkedFrom).toEqual({ sourceRunId, mode: 'replay', fromSeq: 0 });
      delete p.metadata!.forkedFrom;
    }
    if (sourceRunId !== undefined && e.type === 'node.completed') {
      expect(p.replayedFrom).toMatchObject({ sourceRunId });
      delete p.replayedFrom;
    }
    return stripVolatile(c);
  };
}

const terminal = (s: Record<string, unknown>): boolean =>
  ['completed', 'failed', 'cancelled'].includes(s.status as string);

describe.each(BACKENDS)('RFC 0041 §C replay observable sequence over serve ($name)', (backend) => {
  let h: StoreHandle;
  let srv: Served;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    h = await backend.fresh();
    const token = await makeToken(h.location, 'client');
    srv = await serve(h.location, ['--enable-test-seams']);
    api = client(srv.url, token);
  }, 120_000);

  afterAll(async () => {
    expect(await srv.stop()).toBe(0);
    await h.cleanup();
  });

  async function sourceAndReplay(): Promise<{ source: RunEvent[]; replay: RunEvent[]; sourceRunId: string }> {
    const created = await api.post('/v1/runs', { workflowId: FIXTURE });
    expect(created.status).toBe(201);
    const sourceRunId = created.body.runId as string;
    expect((await api.until(sourceRunId, terminal)).status).toBe('completed');
    const fork = await api.post(`/v1/runs/${sourceRunId}:fork`, { mode: 'replay', fromSeq: 0 });
    expect(fork.status).toBe(201);
    const replayRunId = fork.body.runId as string;
    expect((await api.until(replayRunId, terminal)).status).toBe('completed');
    const [source, replay] = [await api.events(sourceRunId), await api.events(replayRunId)];
    expect(logProblems(source)).toEqual([]);
    expect(logProblems(replay)).toEqual([]);
    return { source, replay, sourceRunId };
  }

  it('a replay fork reproduces the source log under the scenario normalisation, lineage and causation aside', async () => {
    const { source, replay, sourceRunId } = await sourceAndReplay();
    expect(replay.map(comparable(replay, sourceRunId))).toEqual(source.map(comparable(source)));
  });

  it('the nondeterministic node replays its original observable events instead of re-executing', async () => {
    const { source, replay, sourceRunId } = await sourceAndReplay();
    const of = (events: RunEvent[], from?: string) =>
      events.filter((e) => e.nodeId === NONDET_NODE).map(comparable(events, from));
    expect(of(source).length).toBeGreaterThan(0);
    expect(of(replay, sourceRunId)).toEqual(of(source));
  });

  // The scenario compares `causationId` verbatim. RFC 0002 §B has a causation name an event of the run's own log
  // (`agent.toolReturned.causationId` MUST equal its `agent.toolCalled`'s `eventId`) and run-event.schema.json makes
  // every `eventId` globally unique, so a fork's causations cannot equal its source's: the scenario's comparison cannot
  // hold for any log with causation, and executionModel stays 3 (docs/openwop.md §"executionModel stays at version 3").
  // This pins that the documented fields are the only difference, and that version 4 is not claimed while they remain.
  it('under the scenario normalisation alone the logs differ only in causation and lineage, so version 4 is not advertised', async () => {
    const { source, replay } = await sourceAndReplay();
    expect(replay.map((e) => [e.sequence, e.type, e.nodeId])).toEqual(
      source.map((e) => [e.sequence, e.type, e.nodeId]),
    );
    const differing = new Set<string>();
    source.forEach((e, i) => diffPaths(stripVolatile(e), stripVolatile(replay[i]), '', differing));
    expect([...differing].sort()).toEqual(['causationId', 'payload.metadata.forkedFrom', 'payload.replayedFrom']);
    const caps = (await api.get('/.well-known/openwop')).body;
    expect(caps.multiAgent.executionModel.version).toBe(3);
    expect(caps.multiAgent.executionModel).not.toHaveProperty('replayDeterminism');
  });

  // replay.md §C.1 (normative): the events `< fromSeq` a replay fork copies are byte-equivalent to the source's,
  // modulo clocks and freshly minted ids; causation is compared by the sequence it names in each log.
  it('a replay fork from the middle copies the source prefix [0, fromSeq) byte for byte, run.started included', async () => {
    const created = await api.post('/v1/runs', { workflowId: FIXTURE });
    const sourceRunId = created.body.runId as string;
    expect((await api.until(sourceRunId, terminal)).status).toBe('completed');
    const source = await api.events(sourceRunId);
    const fromSeq = source.find((e) => e.type === 'node.completed' && e.nodeId === NONDET_NODE)!.sequence + 1;
    const fork = await api.post(`/v1/runs/${sourceRunId}:fork`, { mode: 'replay', fromSeq });
    expect(fork.status).toBe(201);
    expect((await api.until(fork.body.runId as string, terminal)).status).toBe('completed');
    const replay = await api.events(fork.body.runId as string);
    const prefix = (log: RunEvent[]) => log.filter((e) => e.sequence < fromSeq).map(comparable(log));
    expect(prefix(replay)).toEqual(prefix(source));
    expect(prefix(source).length).toBe(fromSeq);
    const snap = (await api.get(`/v1/runs/${fork.body.runId as string}`)).body;
    expect(snap.metadata.forkedFrom).toEqual({ sourceRunId, mode: 'replay', fromSeq });
  });
});
