import { monotonicFactory, isValid } from 'ulidx';
import type { Clock } from './clock.js';
import { pooledCryptoRandom } from './pooled-random.js';

/** Id prefixes of the wire contract §1 plus the host's own records. */
export const ID_PREFIXES = {
  session: 'ses_',
  command: 'cmd_',
  permit: 'prm_',
  approval: 'apr_',
  operation: 'op_',
  receipt: 'rcp_',
  run: 'run_',
  event: 'evt_',
  task: 'tsk_',
  token: 'tok_',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;
type Brand<K extends string> = string & { readonly __brand: K };
export type SessionId = Brand<'session'>;
export type CommandId = Brand<'command'>;
export type PermitId = Brand<'permit'>;
export type ApprovalId = Brand<'approval'>;
export type OperationId = Brand<'operation'>;
export type ReceiptId = Brand<'receipt'>;
export type RunId = Brand<'run'>;

/** Allocates prefixed, monotonic ULIDs from an injected clock and optional seeded PRNG. */
export interface IdFactory {
  next(kind: IdKind): string;
}

/** A seeded PRNG (mulberry32) so ids are reproducible in tests and replays. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Ids from `clock`; their random part from `random` (tests: {@link seededRandom}), else the pooled OS CSPRNG. */
export function createIdFactory(clock: Clock, random?: () => number): IdFactory {
  const ulid = monotonicFactory(random ?? pooledCryptoRandom());
  return { next: (kind) => ID_PREFIXES[kind] + ulid(clock.now()) };
}

/** True when `id` is `<prefix><ULID>` for `kind`. */
export function isId(kind: IdKind, id: unknown): boolean {
  const p = ID_PREFIXES[kind];
  return typeof id === 'string' && id.startsWith(p) && isValid(id.slice(p.length));
}
