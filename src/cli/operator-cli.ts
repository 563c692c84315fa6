/** What the operator commands (`approvals`, `estop`, `reset`, `permits`) share: the store flag, the runtime, the human. */
import { Option } from 'commander';
import { RealClock } from '../core/index.js';
import { openOperatorRuntime } from '../engine/operator-runtime.js';
import type { OperatorRuntime } from '../engine/operator-runtime.js';
import { openDb, resolveDbLocation } from '../ledger/index.js';
import type { HumanPrincipal } from '../policy/index.js';
import { badFlag } from './cli-runtime.js';

export const dbOption = () =>
  new Option('--db <location>', 'store: SQLite file or postgres:// URL (default MHS_HOST_DB or ./.mhs-host/host.db)');

/**
 * Opens the operator services on the store (no engine, no recovery: safe next to a waiting `invoke` or a
 * running `serve` on the same store), runs `fn`, closes.
 */
export async function withOperator<T>(flag: string | undefined, fn: (rt: OperatorRuntime) => Promise<T>): Promise<T> {
  const db = await openDb(resolveDbLocation({ flag }));
  try {
    const rt = await openOperatorRuntime(db, new RealClock());
    try {
      return await fn(rt);
    } finally {
      await rt.close();
    }
  } finally {
    await db.close();
  }
}

/**
 * The human acting: `--operator` or `MHS_OPERATOR`, required (an operator action always names its human,
 * HOST-035, 044). Recorded like the console's principal: `{kind: human, id, name}`.
 */
export function operatorPrincipal(flag: string | undefined, env = process.env): HumanPrincipal {
  const id = (flag ?? env.MHS_OPERATOR ?? '').trim();
  if (!id) throw badFlag('--operator', 'an operator identity is required (--operator <id> or MHS_OPERATOR)');
  if (!/^[\w.@:+-]{1,128}$/.test(id))
    throw badFlag('--operator', 'use letters, digits and . _ @ : + - (at most 128)', { value: id });
  return { kind: 'human', id, name: id };
}
