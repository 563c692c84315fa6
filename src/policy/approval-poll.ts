import { ErrorCode, HostError } from '../core/index.js';

/**
 * How often a waiting call re-reads its pending approval from the store, to see a decision made by another
 * host process on the same store (`mhs-host approvals approve` next to `serve` or `invoke`). A decision in
 * the same process wakes the call at once and never waits for this.
 */
export const DEFAULT_APPROVAL_POLL_MS = 2000;

/** Environment variable overriding {@link DEFAULT_APPROVAL_POLL_MS}: whole milliseconds, 10 to 60000. */
export const APPROVAL_POLL_ENV_VAR = 'MHS_APPROVAL_POLL_MS';

/** The poll interval named by {@link APPROVAL_POLL_ENV_VAR}, else the default; `MHS.HOST.CONFIG_INVALID` when malformed. */
export function approvalPollMsFromEnv(env: Record<string, string | undefined> = process.env): number {
  const raw = env[APPROVAL_POLL_ENV_VAR]?.trim();
  if (!raw) return DEFAULT_APPROVAL_POLL_MS;
  const n = Number(raw);
  if (/^\d+$/.test(raw) && n >= 10 && n <= 60_000) return n;
  throw new HostError(
    ErrorCode.HOST_CONFIG_INVALID,
    `${APPROVAL_POLL_ENV_VAR} must be whole milliseconds from 10 to 60000, not ${JSON.stringify(raw)}`,
    { variable: APPROVAL_POLL_ENV_VAR, value: raw },
    { remediation: `Unset ${APPROVAL_POLL_ENV_VAR} (default ${DEFAULT_APPROVAL_POLL_MS} ms) or set it in range.` },
  );
}
