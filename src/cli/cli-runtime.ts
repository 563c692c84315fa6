import { MessageChannel } from 'node:worker_threads';
import type { Command } from 'commander';
import { ErrorCode, HostError, RealClock, isId } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { openHostRuntime } from '../engine/host-runtime.js';
import type { HostRuntime, HostRuntimeOptions } from '../engine/host-runtime.js';
import { DEFAULT_POLICY, loadPolicyFile } from '../policy/index.js';
import type { PolicyConfig } from '../policy/index.js';
import { approvalPrinter } from './approval-prompt.js';
import { withdrawOnSignal } from './approval-withdraw.js';

/** How long a CLI call waits for a human approval unless `--approval-timeout` says otherwise (10 min). */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 600_000;

/** Flags shared by the commands that drive endpoints (`invoke`, `run-task`). */
export interface RuntimeFlags {
  db?: string;
  policy?: string;
  approvalTimeout?: number;
}

/** A bad command-line value: `validation_error` with the flag named (never a stack trace). */
export function badFlag(flag: string, message: string, details: Record<string, unknown> = {}): HostError {
  return new HostError(ErrorCode.VALIDATION_ERROR, `${flag}: ${message}`, { flag, ...details });
}

/** Parses a positive whole number of milliseconds for `flag`. */
export function positiveMs(flag: string): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n) || n < 1)
      throw badFlag(flag, 'expected a positive whole number of milliseconds', { value: v });
    return n;
  };
}

/** Checks an approval id (`apr_<ULID>`). */
export function approvalIdArg(v: string): string {
  if (!isId('approval', v)) throw badFlag('<id>', 'expected an approval id (apr_...)', { value: v });
  return v;
}

/** Adds `--db`, `--policy` and `--approval-timeout` to a command that drives endpoints. */
export function withRuntimeOptions(cmd: Command): Command {
  return cmd
    .option('--db <location>', 'store: SQLite file or postgres:// URL (default MHS_HOST_DB or ./.mhs-host/host.db)')
    .option('--policy <file>', 'approval policy JSON (default: deny by default, a human approves R2+)')
    .option(
      '--approval-timeout <ms>',
      `how long to wait for an operator's approval decision (default ${DEFAULT_APPROVAL_TIMEOUT_MS} ms); then exit with MHS.HOST.APPROVAL_TIMEOUT`,
      positiveMs('--approval-timeout'),
    );
}

/**
 * The policy a CLI command decides with: `--policy FILE` or {@link DEFAULT_POLICY}, its approval timeout
 * capped by `--approval-timeout` (an approval never waits forever in a CLI process; HOST-043: no fail-open).
 */
export function cliPolicy(flags: Pick<RuntimeFlags, 'policy' | 'approvalTimeout'>): PolicyConfig {
  const base = flags.policy ? loadPolicyFile(flags.policy) : DEFAULT_POLICY;
  const wait = flags.approvalTimeout ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  return { ...base, approvalTimeoutMs: Math.min(base.approvalTimeoutMs ?? wait, wait) };
}

/**
 * Keeps the process alive while the runtime is open: the clock's timers are unref'd, and a call waiting
 * for an approval over HTTP may have no other open handle. Returns the release function.
 */
export function holdProcessOpen(): () => void {
  const ch = new MessageChannel();
  ch.port1.on('message', () => undefined);
  return () => ch.port1.close();
}

/**
 * Opens the one {@link HostRuntime} for a CLI command, with the policy gate, and prints every approval the
 * command waits for (id, what, how to decide it) to stderr; Ctrl-C withdraws the ones still pending
 * ({@link withdrawOnSignal}). `close()` releases everything.
 */
export async function openCliRuntime(
  flags: RuntimeFlags,
  opts: {
    clock?: Clock;
    err?: (line: string) => void;
    /** Extra runtime options, e.g. a replay run's label and session mode (HOST-085). */
    runtime?: Pick<HostRuntimeOptions, 'ledgerLabel' | 'engine'>;
  } = {},
): Promise<HostRuntime> {
  const policy = cliPolicy(flags);
  const release = holdProcessOpen();
  try {
    const rt = await openHostRuntime({
      clock: opts.clock ?? new RealClock(),
      policy,
      ...(flags.db ? { db: flags.db } : {}),
      ...opts.runtime,
    });
    const dbHint = flags.db ? ` --db ${flags.db}` : '';
    const err = opts.err ?? ((l: string) => void process.stderr.write(`${l}\n`));
    const off = rt.services.events.subscribe(
      approvalPrinter(err, { dbHint, timeoutMs: policy.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS }),
    );
    const offSignals = withdrawOnSignal(rt, err);
    const close = rt.close.bind(rt);
    rt.close = async () => {
      off();
      offSignals();
      try {
        await close();
      } finally {
        release();
      }
    };
    return rt;
  } catch (err) {
    release();
    throw err;
  }
}
