// Guarantees: the simulated clock fires timers in due order only when advanced; ids are prefixed ULIDs,
// monotonic and reproducible from a seed, else drawn from the pooled OS CSPRNG; every error carries a registered code and maps to both wire forms.
import { describe, expect, it } from 'vitest';
import {
  SimulatedClock,
  createIdFactory,
  seededRandom,
  isId,
  HostError,
  ErrorCode,
  isErrorCode,
  toHostError,
} from '../../src/core/index.js';
import { pooledCryptoRandom } from '../../src/core/pooled-random.js';

describe('SimulatedClock', () => {
  it('fires due timers in order, including ones scheduled while firing', () => {
    const clock = new SimulatedClock(1000);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('b'), 20);
    clock.setTimeout(() => {
      fired.push('a');
      clock.setTimeout(() => fired.push('a2'), 5);
    }, 10);
    const h = clock.setTimeout(() => fired.push('never'), 15);
    clock.clearTimeout(h);
    clock.advance(9);
    expect(fired).toEqual([]);
    clock.advance(11);
    expect(fired).toEqual(['a', 'a2', 'b']);
    expect(clock.now()).toBe(1020);
    expect(clock.pending()).toBe(0);
  });
});

describe('ids', () => {
  it('are prefixed, monotonic and seed-reproducible', () => {
    const clock = new SimulatedClock();
    const a = createIdFactory(clock, seededRandom(7));
    const b = createIdFactory(clock, seededRandom(7));
    const xs = [a.next('command'), a.next('command'), a.next('command')];
    expect(xs.every((x) => isId('command', x))).toBe(true);
    expect([...xs].sort()).toEqual(xs);
    expect(b.next('command')).toBe(xs[0]);
    expect(isId('session', xs[0])).toBe(false);
  });

  it('without a seed draw their random part from the pooled OS CSPRNG: valid, distinct across factories, spread', () => {
    // Issue 21 item 5: one `randomFillSync` per 1,024 draws instead of a WebCrypto call per id character.
    const clock = new SimulatedClock(5_000);
    const factories = [createIdFactory(clock), createIdFactory(clock)];
    const ids = Array.from({ length: 3_000 }, (_, i) => factories[i % 2]!.next('event'));
    expect(ids.every((x) => isId('event', x))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // The first id of each factory has a fresh random part (later ones in the same ms increment it, monotonic).
    const firsts = Array.from({ length: 400 }, () => createIdFactory(clock).next('event').slice(-16));
    expect(new Set(firsts).size).toBe(firsts.length);
    const symbols = new Set(firsts.join(''));
    expect(symbols.size).toBe(32);
    const r = pooledCryptoRandom(8);
    const draws = Array.from({ length: 100 }, r);
    expect(draws.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(new Set(draws).size).toBeGreaterThan(90);
  });
});

describe('HostError', () => {
  it('every registered code round-trips through the wire form', () => {
    for (const code of Object.values(ErrorCode)) {
      const e = new HostError(code, 'm', { a: 1 }, { remediation: 'r' });
      const back = HostError.fromWire(e.toWire());
      expect(back.code).toBe(code);
      expect(back.details).toEqual({ a: 1 });
      expect(e.toEnvelope()).toEqual({ error: code, message: 'm', details: { a: 1 } });
    }
  });
  it('maps unknown wire codes and thrown values to an internal code', () => {
    const e = HostError.fromWire({ mhs_code: 'MHS.VENDOR.X', message: 'x', remediation: '' });
    expect(e.code).toBe(ErrorCode.HOST_INTERNAL);
    expect(e.details['wire_code']).toBe('MHS.VENDOR.X');
    expect(toHostError(new Error('boom')).code).toBe(ErrorCode.HOST_INTERNAL);
    expect(isErrorCode('MHS.SESSION.SCOPE')).toBe(true);
  });
  it('marks pre-send failures retryable and unknown outcomes not', () => {
    expect(new HostError(ErrorCode.TRANSPORT_TIMEOUT_PRESEND, 'x').retryable).toBe(true);
    expect(new HostError(ErrorCode.OUTCOME_UNKNOWN, 'x').retryable).toBe(false);
  });
});
