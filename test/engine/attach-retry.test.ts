// Guarantees (issue 16): AttachRetry retries a connector that cannot be attached with backoff on the injected clock,
// reports it as retrying with the last error and the next attempt, is attached once an attempt succeeds, stops on
// disable (cancel) or a refusal retrying cannot help (MHS.HOST.CONNECTOR_DISABLED), and schedules nothing after close.
import { describe, expect, it } from 'vitest';
import { ErrorCode, HostError, SimulatedClock } from '../../src/core/index.js';
import { AttachRetry } from '../../src/engine/attach-retry.js';

const tick = () => new Promise((r) => setImmediate(r));

function harness(outcomes: Array<Error | 'ok'>) {
  const clock = new SimulatedClock(1_700_000_000_000);
  const calls: number[] = [];
  const retry = new AttachRetry({
    clock,
    backoff: { initialMs: 100, maxMs: 400, factor: 2 },
    attempt: async () => {
      calls.push(clock.now());
      const o = outcomes.shift() ?? 'ok';
      if (o !== 'ok') throw o;
    },
  });
  return { clock, calls, retry };
}

const down = () => new HostError(ErrorCode.TRANSPORT_DISCONNECTED, 'connection refused');

describe('AttachRetry', () => {
  it('retries with backoff until attached, showing the last error meanwhile', async () => {
    const { clock, calls, retry } = harness([down(), down(), down(), 'ok']);
    await retry.attach('c1');
    expect(retry.status()).toEqual([
      expect.objectContaining({
        connector_id: 'c1',
        state: 'retrying',
        attempts: 1,
        last_error: expect.objectContaining({ code: ErrorCode.TRANSPORT_DISCONNECTED }),
        next_attempt_at: new Date(clock.now() + 100).toISOString(),
      }),
    ]);
    for (const ms of [100, 200, 400]) {
      clock.advance(ms);
      await tick();
    }
    expect(calls.map((t) => t - calls[0]!)).toEqual([0, 100, 300, 700]);
    expect(retry.status()).toEqual([{ connector_id: 'c1', state: 'attached', attempts: 0 }]);
  });

  it('stops on cancel (disabled), on CONNECTOR_DISABLED, and after close', async () => {
    const a = harness([down(), down()]);
    await a.retry.attach('c1');
    a.retry.cancel('c1');
    a.clock.advance(10_000);
    await tick();
    expect(a.calls).toHaveLength(1);
    expect(a.retry.status()).toEqual([]);

    const b = harness([new HostError(ErrorCode.HOST_CONNECTOR_DISABLED, 'disabled')]);
    await b.retry.attach('c2');
    b.clock.advance(10_000);
    await tick();
    expect(b.calls).toHaveLength(1);
    expect(b.retry.status()).toEqual([]);

    const c = harness([down(), down()]);
    await c.retry.attach('c3');
    c.retry.close();
    c.clock.advance(10_000);
    await tick();
    expect(c.calls).toHaveLength(1);
  });
});
