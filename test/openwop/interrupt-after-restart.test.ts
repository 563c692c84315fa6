// An interrupt answered right after a restart: the run waits at an approval in a real SQLite store, the host stops
// and a new one opens on the same store; an answer sent as soon as the new host is up (before the resumed node has
// re-registered its interrupt) is applied, not refused `not_found`, and the run ends as answered. (The same path
// applies, on a shared store, the answers a process takes over with a run: issue 19.) An answer to a node
// with no open interrupt in its log is still `not_found` at once.
import { describe, expect, it } from 'vitest';
import { ErrorCode, HostError } from '../../src/core/index.js';
import type { NodeModule } from '../../src/openwop/node-registry.js';
import { HOLD, HostFixture, closedAfterEach, oneNode, startUntilAsked } from './service-test-kit.js';

/** Holds on an approval; resumed, it first does 300 ms of work (as a node that reads something does) before holding. */
const holdNode: NodeModule = {
  typeId: 'test.hold',
  async execute(ctx) {
    if (ctx.resumed) await new Promise((r) => setTimeout(r, 300));
    const answer = await ctx.interrupt(HOLD);
    return { outputs: { action: answer.timedOut ? null : answer.resumeValue.action } };
  },
};

const fixtures = closedAfterEach<HostFixture>();

describe('an interrupt answered right after a restart', () => {
  it('is applied once the resumed node holds on it again, not refused', async () => {
    const fx = new HostFixture(async () => ({ nodes: [holdNode] }));
    fixtures.push(fx);
    await fx.open();
    await fx.host.catalog.register(oneNode('hold', { typeId: 'test.hold' }));
    const { runId } = await startUntilAsked(fx.host, 'hold');
    const host = await fx.reopen();
    await host.runs.resolveInterrupt(runId, 'n', { action: 'accept' }, { principal: 't' });
    expect(await host.runs.waitTerminal(runId)).toBe('completed');
    const done = (await host.store.events(runId)).find((e) => e.type === 'node.completed');
    expect(done?.payload.outputs).toEqual({ action: 'accept' });
  });

  it('a node with no open interrupt in its log is not_found at once', async () => {
    const fx = new HostFixture(async () => ({ nodes: [holdNode] }));
    fixtures.push(fx);
    await fx.open();
    await fx.host.catalog.register(oneNode('hold', { typeId: 'test.hold' }));
    const { runId } = await startUntilAsked(fx.host, 'hold');
    const err = await fx.host.runs.resolveInterrupt(runId, 'other', { action: 'accept' }, { principal: 't' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(HostError);
    expect((err as HostError).code).toBe(ErrorCode.NOT_FOUND);
  });
});
