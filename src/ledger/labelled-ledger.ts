/**
 * A ledger view that stamps fixed fields on every entry it appends, e.g. `execution: "replay"` on every entry of a
 * replay run, so that no entry of a replay can be read as live execution (HOST-085).
 */
import type { Db } from './db.js';
import type { AppendOptions, DurableLedger, LedgerAppend } from './ledger-types.js';

/** The label of every entry a replay run writes (HOST-085); `replay_of` is the replay plan's digest. */
export interface ReplayLabel {
  execution: 'replay';
  replay_of: string;
}

/**
 * Returns `ledger` with `label` merged into every appended entry (`append`, `appendBatch`, `appendIn`,
 * `checkpoint`); the label's fields win over the entry's. Everything else is the ledger's own.
 */
export function labelLedger(ledger: DurableLedger, label: Readonly<Record<string, unknown>>): DurableLedger {
  const stamp = (e: LedgerAppend): LedgerAppend => ({ ...e, ...label });
  return new Proxy(ledger, {
    get(target, prop) {
      if (prop === 'append') return (e: LedgerAppend) => target.append(stamp(e));
      if (prop === 'appendBatch')
        return (es: readonly LedgerAppend[], o?: AppendOptions) => target.appendBatch(es.map(stamp), o);
      if (prop === 'appendIn')
        return (t: Db, es: readonly LedgerAppend[], o?: AppendOptions) => target.appendIn(t, es.map(stamp), o);
      if (prop === 'checkpoint') return (extra?: Record<string, unknown>) => target.checkpoint({ ...extra, ...label });
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
