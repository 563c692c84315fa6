/** Gateway settings read from the environment, validated like every other host setting. */
import { ErrorCode, HostError } from '../core/index.js';
import { DEFAULT_GATEWAY_POLL_MS } from './gateway.js';

/** How often the gateway re-reads connector rows for enables and disables by other processes. */
export const GATEWAY_POLL_ENV_VAR = 'MHS_GATEWAY_POLL_MS';

/** `MHS_GATEWAY_POLL_MS` (10-60000 ms; default 2000); anything else is `MHS.HOST.CONFIG_INVALID`. */
export function gatewayPollMsFromEnv(env: Record<string, string | undefined> = process.env): number {
  const raw = env[GATEWAY_POLL_ENV_VAR]?.trim();
  if (!raw) return DEFAULT_GATEWAY_POLL_MS;
  const n = Number(raw);
  if (/^\d+$/.test(raw) && n >= 10 && n <= 60_000) return n;
  throw new HostError(
    ErrorCode.HOST_CONFIG_INVALID,
    `${GATEWAY_POLL_ENV_VAR} must be whole milliseconds from 10 to 60000, not ${JSON.stringify(raw)}`,
    { variable: GATEWAY_POLL_ENV_VAR, value: raw },
    { remediation: `Unset ${GATEWAY_POLL_ENV_VAR} (default ${DEFAULT_GATEWAY_POLL_MS} ms) or set it in range.` },
  );
}
