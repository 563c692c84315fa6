// Guarantees (issue 16 item 3, one canonical-JSON boundary): an entry holding a string JCS cannot encode (a lone
// UTF-16 surrogate, in a key or a value) is refused alone with MHS.HOST.JSON_UNENCODABLE and its path, nothing of
// it is written, the ledger stays `available` (never a store outage) and the next entry appends on an intact chain.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, SimulatedClock, jcs, unencodablePath } from '../../src/core/index.js';
import type { HostError } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/index.js';
import { tempDir } from './helpers.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function fresh() {
  const t = tempDir();
  const db: Db = await openDb(join(t.dir, 'host.db'));
  const ledger = await openLedger(db, { clock: new SimulatedClock(0), probeIntervalMs: 0 });
  cleanups.push(async () => {
    ledger.dispose();
    await db.close();
    t.cleanup();
  });
  return ledger;
}

describe('the canonical-JSON boundary', () => {
  it('finds lone surrogates in keys and values, and accepts pairs', () => {
    expect(unencodablePath({ a: ['ok', { b: 'x\ud800' }] })).toBe('/a/1/b');
    expect(unencodablePath({ ['k\udc00']: 1 })).toBe('/k\udc00');
    expect(unencodablePath({ emoji: '\ud83d\ude00', a: [1, null, true] })).toBeNull();
    expect(unencodablePath('\udfff\ud800')).toBe('');
    try {
      jcs({ a: '\ud800' });
      expect.unreachable();
    } catch (err) {
      expect((err as HostError).code).toBe(ErrorCode.HOST_JSON_UNENCODABLE);
    }
  });

  it.each([
    ['a value', { note: 'bad \ud800 text' }],
    ['a key', { result: { ['\udc00']: 1 } }],
    ['a nested array', { receipt: { output: ['ok', '\ud83d'] } }],
  ])('an entry with a lone surrogate in %s is refused alone; the ledger stays available', async (_where, extra) => {
    const ledger = await fresh();
    const before = await ledger.head();
    const bad = ledger.append({ kind: 'error', endpoint_id: 'mhs://a', ...extra });
    await expect(bad).rejects.toMatchObject({ code: ErrorCode.HOST_JSON_UNENCODABLE });
    expect(ledger.status().state).toBe('available');
    expect((await ledger.head()).seq).toBe(before.seq);
    // Another endpoint's entry in the same tick still commits.
    const [okEntry] = await Promise.all([
      ledger.append({ kind: 'error', endpoint_id: 'mhs://b', note: 'fine' }),
      ledger.append({ kind: 'error', endpoint_id: 'mhs://a', ...extra }).catch((e: unknown) => e),
    ]);
    expect(okEntry.seq).toBe(before.seq + 1);
    expect(ledger.status().state).toBe('available');
    expect(await ledger.verify()).toMatchObject({ ok: true });
  });
});
