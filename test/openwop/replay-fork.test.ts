// Guarantees (replay.md §"Side-effect suppression in replay", RFC 0140; RFC 0237 fixture), on a real host over a real
// SQLite file (and PostgreSQL when MHS_TEST_PG_URL is set), each conformance fixture as its description states:
// a `mode:"replay"` fork resolves side-effecting nodes from the source's recorded outcome and fires no effect (the
// effect seam's count does not move, for the fork or the source); a side-effecting node the source never recorded
// fails closed `replay_source_missing` without firing; outcomes are keyed by the execution ordinal n, so a loop's
// second execution does not resolve from the first; pure nodes re-execute live; declared nondeterminism is reproduced
// by a replay and drawn afresh by a branch; an approval gate is not asked again; a run marked as a replay whose lineage
// row is missing fails every effect closed; a replay fork survives a host restart still suppressed; a branch re-fires
// effects; fork validation uses stable codes; lineage is carried in `run.started.payload.metadata.forkedFrom`; every
// event of every run matches the run-event schemas.
import { afterEach, describe, expect, it } from 'vitest';
import { BACKENDS } from '../ledger/helpers.js';
import { CALLER, ReplayHost, expectValidLog, outcomesOf } from './replay-harness.js';
import { oneNode, resolveWhenPending } from './service-test-kit.js';
import type { NodeModule } from '../../src/openwop/node-registry.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe.each(BACKENDS)('replay fork on $name', (backend) => {
  async function openHost(nodes: NodeModule[] = []): Promise<ReplayHost> {
    const store = await backend.fresh();
    const h = new ReplayHost(store.location, nodes);
    cleanups.push(() => store.cleanup());
    cleanups.push(() => h.close());
    await h.open();
    return h;
  }

  it('conformance-replay-effect: the source fires one effect, the replay fork none; pure start re-executes live', async () => {
    const h = await openHost();
    const src = await h.start('conformance-replay-effect');
    expect(await h.drive(src)).toBe('completed');
    expect(h.host.replay.effectCount(src)).toBe(1);

    const { fork, created } = await h.host.replay.fork(src, { mode: 'replay' }, CALLER);
    expect(created).toBe(true);
    expect(fork).toMatchObject({
      sourceRunId: src,
      fromSeq: 0,
      mode: 'replay',
      eventsUrl: `/v1/runs/${fork.runId}/events`,
    });
    expect(await h.drive(fork.runId)).toBe('completed');
    expect(h.host.replay.effectCount(fork.runId)).toBe(0);
    expect(h.host.replay.effectCount(src)).toBe(1);

    const events = await expectValidLog(h, fork.runId);
    const started = events.find((e) => e.type === 'run.started')!;
    expect(started.payload.metadata).toMatchObject({ forkedFrom: { sourceRunId: src, mode: 'replay', fromSeq: 0 } });
    const [effect] = outcomesOf(events, 'effect');
    const srcEffect = outcomesOf(await expectValidLog(h, src), 'effect')[0]!;
    expect(effect).toMatchObject({ type: 'node.completed', payload: { outputs: srcEffect.payload.outputs } });
    expect(effect!.payload.replayedFrom).toEqual({ sourceRunId: src, eventId: srcEffect.eventId, execution: 1 });
    // The pure node ran again: its completion is its own, not a recorded one.
    const [start] = outcomesOf(events, 'start');
    expect(start).toMatchObject({ type: 'node.completed' });
    expect(start!.payload.replayedFrom).toBeUndefined();
  });

  it('conformance-replay-effect-unreached: a never-recorded effect fails closed replay_source_missing and fires nothing', async () => {
    const h = await openHost();
    const src = await h.start('conformance-replay-effect-unreached', { delayMs: 30_000 });
    await h.sleeping(src, 'wait');
    expect((await h.host.runs.cancel(src, CALLER)).status).toBe('cancelled');
    expect(h.host.replay.effectCount(src)).toBe(0);

    const { fork } = await h.host.replay.fork(src, { mode: 'replay' }, CALLER);
    expect(await h.drive(fork.runId)).toBe('failed');
    const events = await expectValidLog(h, fork.runId);
    expect(outcomesOf(events, 'wait')[0]).toMatchObject({ type: 'node.completed' }); // pure delay re-executed live
    expect(outcomesOf(events, 'effect')).toMatchObject([
      { type: 'node.failed', payload: { error: { code: 'replay_source_missing' } } },
    ]);
    expect(h.host.replay.effectCount(fork.runId)).toBe(0);
  });

  it('conformance-replay-ordinal-loop: execution 1 resolves from n = 1, execution 2 fails closed (no n = 2 recorded)', async () => {
    const h = await openHost();
    const src = await h.start('conformance-replay-ordinal-loop');
    await h.sleeping(src, 'wait');
    expect((await h.host.runs.cancel(src, CALLER)).status).toBe('cancelled');
    const srcEvents = await expectValidLog(h, src);
    expect(outcomesOf(srcEvents, 'effect')).toHaveLength(1);
    const at = srcEvents.find((e) => e.type === 'node.started' && e.nodeId === 'effect')!.sequence;

    const { fork } = await h.host.replay.fork(src, { mode: 'replay', fromSeq: at }, CALLER);
    expect(fork.fromSeq).toBe(at);
    expect(await h.drive(fork.runId)).toBe('failed');
    const events = await expectValidLog(h, fork.runId);
    // Fixed history: the source's events < fromSeq, same types and payloads, in order.
    expect(events.slice(0, at).map((e) => [e.type, e.nodeId])).toEqual(
      srcEvents.slice(0, at).map((e) => [e.type, e.nodeId]),
    );
    const effect = outcomesOf(events, 'effect');
    expect(effect).toHaveLength(2);
    expect(effect[0]).toMatchObject({
      type: 'node.completed',
      payload: { replayedFrom: { sourceRunId: src, execution: 1 } },
    });
    expect(effect[1]).toMatchObject({
      type: 'node.failed',
      payload: {
        error: { code: 'replay_source_missing', details: { sourceRunId: src, nodeId: 'effect', execution: 2 } },
      },
    });
    expect(h.host.replay.effectCount(src)).toBe(1);
    expect(h.host.replay.effectCount(fork.runId)).toBe(0);
  });

  it('conformance-replay-side-effect: core.conformance.hold re-executes live, core.conformance.side-effect is suppressed', async () => {
    const h = await openHost();
    // Cancelled mid-hold: the side effect has no recorded outcome.
    const cancelled = await h.start('conformance-replay-side-effect', { delayMs: 30_000 });
    await h.sleeping(cancelled, 'wait');
    await h.host.runs.cancel(cancelled, CALLER);
    const { fork: failing } = await h.host.replay.fork(cancelled, { mode: 'replay' }, CALLER);
    expect(await h.drive(failing.runId)).toBe('failed');
    const failedEvents = await expectValidLog(h, failing.runId);
    expect(outcomesOf(failedEvents, 'wait')).toMatchObject([
      { type: 'node.completed', payload: { outputs: { heldMs: 30_000 } } },
    ]);
    expect(outcomesOf(failedEvents, 'effect')).toMatchObject([
      { type: 'node.failed', payload: { error: { code: 'replay_source_missing' } } },
    ]);

    // Completed: the fork reproduces the recorded outcome and the count stays where the source left it.
    const done = await h.start('conformance-replay-side-effect', { delayMs: 5_000 });
    expect(await h.drive(done)).toBe('completed');
    const { fork } = await h.host.replay.fork(done, { mode: 'replay' }, CALLER);
    expect(await h.drive(fork.runId)).toBe('completed');
    expect(outcomesOf(await expectValidLog(h, fork.runId), 'effect')[0]!.payload.replayedFrom).toMatchObject({
      sourceRunId: done,
    });
    expect([
      h.host.replay.effectCount(done),
      h.host.replay.effectCount(fork.runId),
      h.host.replay.effectCount(failing.runId),
    ]).toEqual([1, 0, 0]);
  });

  it('conformance-nondeterminism: a replay fork reproduces every listed source; a branch draws afresh', async () => {
    const h = await openHost();
    const sources = (h.host.capabilities().replay as { nondeterminismSources: string[] }).nondeterminismSources;
    expect(sources).toEqual(['clock', 'random', 'id']);
    const src = await h.start('conformance-nondeterminism');
    expect(await h.drive(src)).toBe('completed');
    const drawn = (await h.host.runs.snapshot(src)) as unknown as {
      outputs?: Record<string, Record<string, unknown>>;
    };
    const outputsOf = async (runId: string): Promise<Record<string, unknown>> =>
      (await h.events(runId)).find((e) => e.type === 'run.completed')!.payload.outputs as Record<string, unknown>;
    const original = (await outputsOf(src)).draw as Record<string, unknown>;
    expect(Object.keys(original).sort()).toEqual([...sources].sort());
    void drawn;

    h.clock.advance(60_000); // a live clock draw would now differ
    const { fork: replay } = await h.host.replay.fork(src, { mode: 'replay' }, CALLER);
    expect(await h.drive(replay.runId)).toBe('completed');
    expect((await outputsOf(replay.runId)).draw).toEqual(original);
    // A replay of the replay reproduces them too.
    const { fork: again } = await h.host.replay.fork(replay.runId, { mode: 'replay' }, CALLER);
    expect(await h.drive(again.runId)).toBe('completed');
    expect((await outputsOf(again.runId)).draw).toEqual(original);

    const { fork: branch } = await h.host.replay.fork(src, { mode: 'branch', fromSeq: 1 }, CALLER);
    expect(await h.drive(branch.runId)).toBe('completed');
    const fresh = (await outputsOf(branch.runId)).draw as Record<string, unknown>;
    expect(fresh.random).not.toEqual(original.random);
    expect(fresh.clock).not.toEqual(original.clock);
    await expectValidLog(h, branch.runId);
  });

  it('a replay fork interrupted by a host restart resumes and is still suppressed', async () => {
    const h = await openHost();
    const src = await h.start('conformance-replay-side-effect', { delayMs: 5_000 });
    expect(await h.drive(src)).toBe('completed');
    const { fork } = await h.host.replay.fork(src, { mode: 'replay' }, CALLER);
    await h.sleeping(fork.runId, 'wait');
    await h.reopen();
    expect(await h.drive(fork.runId)).toBe('completed');
    const events = await expectValidLog(h, fork.runId);
    expect(events.some((e) => e.type === 'run.resuming')).toBe(true);
    expect(outcomesOf(events, 'effect')[0]!.payload.replayedFrom).toMatchObject({ sourceRunId: src, execution: 1 });
    expect([h.host.replay.effectCount(src), h.host.replay.effectCount(fork.runId)]).toEqual([1, 0]);
  });

  it('an approval gate in a replay resolves from the recorded decision: nobody is asked again (caveat 2)', async () => {
    const h = await openHost();
    const src = await h.start('conformance-approval');
    await resolveWhenPending(h.host, src, { action: 'accept' });
    expect(await h.drive(src)).toBe('completed');
    const { fork } = await h.host.replay.fork(src, { mode: 'replay' }, CALLER);
    expect(await h.drive(fork.runId)).toBe('completed');
    const events = await expectValidLog(h, fork.runId);
    expect(events.some((e) => e.type === 'interrupt.requested')).toBe(false);
    expect(outcomesOf(events, 'gate')[0]!.payload.replayedFrom).toMatchObject({ sourceRunId: src });
  });

  it('a run that says it is a replay fork but has no lineage row fails every side effect closed', async () => {
    const h = await openHost();
    const { run } = await h.host.runs.createRun(
      { workflowId: 'conformance-replay-effect', metadata: { forkedFrom: { mode: 'replay' } } },
      CALLER,
    );
    expect(await h.drive(run.runId)).toBe('failed');
    expect(outcomesOf(await expectValidLog(h, run.runId), 'effect')).toMatchObject([
      { type: 'node.failed', payload: { error: { code: 'replay_source_missing', details: { sourceRunId: null } } } },
    ]);
    expect(h.host.replay.effectCount(run.runId)).toBe(0);
  });

  it('a pure node whose live output differs from the recorded one reports replay.diverged and the run continues', async () => {
    let calls = 0;
    const counter: NodeModule = {
      typeId: 'test.counter',
      pure: true,
      execute: () => Promise.resolve({ outputs: { n: ++calls } }),
    };
    const h = await openHost([counter]);
    await h.host.catalog.register(oneNode('replay-counter', { id: 'count', typeId: 'test.counter' }), 'test');
    const src = await h.start('replay-counter');
    expect(await h.drive(src)).toBe('completed');
    const { fork } = await h.host.replay.fork(src, { mode: 'replay' }, CALLER);
    expect(await h.drive(fork.runId)).toBe('completed');
    const events = await expectValidLog(h, fork.runId);
    const original = outcomesOf(await h.events(src), 'count')[0]!;
    expect(events.filter((e) => e.type === 'replay.diverged')).toMatchObject([
      {
        nodeId: 'count',
        payload: {
          sourceRunId: src,
          atSequence: original.sequence,
          originalEventId: original.eventId,
          divergenceKind: 'output',
        },
      },
    ]);
    expect(outcomesOf(events, 'count')[0]!.payload.outputs).toEqual({ n: 2 }); // executed live, not resolved

    // The same pure type pinned to an agent is an agent invocation: resolved from the recorded outcome, not run.
    await h.host.catalog.register(
      oneNode('replay-counter-agent', { id: 'count', typeId: 'test.counter', agent: { agentId: 'counter-agent' } }),
      'test',
    );
    const pinned = await h.start('replay-counter-agent');
    expect(await h.drive(pinned)).toBe('completed');
    const { fork: pinnedFork } = await h.host.replay.fork(pinned, { mode: 'replay' }, CALLER);
    expect(await h.drive(pinnedFork.runId)).toBe('completed');
    const [done] = outcomesOf(await expectValidLog(h, pinnedFork.runId), 'count');
    expect(done!.payload).toMatchObject({ outputs: { n: 3 }, replayedFrom: { sourceRunId: pinned } });
    expect(calls).toBe(3);
  });

  it('a branch fork re-fires effects live (suppression is replay-only) and validates its body', async () => {
    const h = await openHost();
    const src = await h.start('conformance-replay-effect');
    expect(await h.drive(src)).toBe('completed');
    const { fork } = await h.host.replay.fork(
      src,
      { mode: 'branch', fromSeq: 1, runOptionsOverlay: { tags: ['what-if'] } },
      CALLER,
    );
    expect(await h.drive(fork.runId)).toBe('completed');
    expect(h.host.replay.effectCount(fork.runId)).toBe(1);
    expect((await h.host.store.getRun(fork.runId))!.tags).toContain('what-if');

    const err = (p: Promise<unknown>): Promise<unknown> =>
      p.then(
        () => 'resolved',
        (e: unknown) => e,
      );
    expect(await err(h.host.replay.fork('run_nope', { mode: 'replay' }, CALLER))).toMatchObject({ code: 'not_found' });
    expect(await err(h.host.replay.fork(src, { mode: 'branch' }, CALLER))).toMatchObject({ code: 'validation_error' });
    expect(await err(h.host.replay.fork(src, { mode: 'replay', fromSeq: 10_000 }, CALLER))).toMatchObject({
      code: 'fork_point_invalid',
    });
    expect(
      await err(h.host.replay.fork(src, { mode: 'replay', runOptionsOverlay: { tags: ['x'] } }, CALLER)),
    ).toMatchObject({ code: 'validation_error' });
  });
});
