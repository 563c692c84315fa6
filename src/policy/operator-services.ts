import { ErrorCode, HostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import type { SafetyStatus } from '../mhs/wire-types.js';
import type { Db } from '../ledger/db.js';
import type { Ledger } from '../ledger/ledger-types.js';
import { createEstopAllowList } from './estop-allow.js';
import type { EstopAllowList } from './estop-allow.js';
import { createSafetyActions } from './estop.js';
import type { SafetyActions } from './estop.js';
import { createOperatorEvents } from './operator-events.js';
import type { OperatorEvents } from './operator-events.js';
import { createPermitService } from './permits.js';
import type { PermitService } from './permits.js';
import { createPolicyGate } from './policy-gate.js';
import type { PolicyGate } from './policy-gate.js';
import type { PolicyConfig } from './policy-config.js';
import type { EnablementPort, EndpointDirectory, OperatorLink } from './ports.js';
import { createTokenStore } from './tokens.js';
import type { TokenStore } from './tokens.js';

/** Inputs of {@link createOperatorServices}. */
export interface OperatorServicesDeps {
  db: Db;
  ledger: Ledger;
  clock: Clock;
  link: OperatorLink;
  enablement: EnablementPort;
  directory: EndpointDirectory;
  policy: PolicyConfig | (() => PolicyConfig | null | Promise<PolicyConfig | null>);
  events?: OperatorEvents;
  /** How often a waiting call re-reads its approval for another process's decision (the gate's `pollMs`). */
  approvalPollMs?: number;
}

/** Everything the operator API, the console and the engine's policy step share. */
export interface OperatorServices {
  tokens: TokenStore;
  gate: PolicyGate;
  permits: PermitService;
  safety: SafetyActions;
  /** Operator-managed trusted e-stop allow-list (HOST-094). */
  estopAllow: EstopAllowList;
  events: OperatorEvents;
}

/**
 * Wires the policy layer once per host: token store, permit service (operator route), the policy
 * gate (pass `gate` to the engine as its `CallGate`) and the trusted e-stop/reset actions.
 */
export function createOperatorServices(d: OperatorServicesDeps): OperatorServices {
  const events = d.events ?? createOperatorEvents();
  const permits = createPermitService({ db: d.db, ledger: d.ledger, clock: d.clock, link: d.link, events });
  const gate = createPolicyGate({
    db: d.db,
    ledger: d.ledger,
    clock: d.clock,
    policy: d.policy,
    permits,
    events,
    readSafety: (endpointId, deviceId) => readSafety(d.link, endpointId, deviceId),
    ...(d.approvalPollMs !== undefined ? { pollMs: d.approvalPollMs } : {}),
  });
  const estopAllow = createEstopAllowList(d.db, d.ledger, d.clock);
  const safety = createSafetyActions({
    allowList: estopAllow,
    ledger: d.ledger,
    clock: d.clock,
    link: d.link,
    enablement: d.enablement,
    directory: d.directory,
    policy: d.policy,
    events,
  });
  return { tokens: createTokenStore(d.db, d.clock), gate, permits, safety, estopAllow, events };
}

/**
 * Reads `mhs__safety` through the operator route. No route for this endpoint (stdio, unknown) →
 * undefined (the manifest's interlocks count); a failed read or a fault rejects (→ refuse).
 */
async function readSafety(link: OperatorLink, endpointId: string, deviceId: string): Promise<SafetyStatus | undefined> {
  let conn;
  try {
    conn = await link.operatorConnection(endpointId);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === ErrorCode.HOST_ADAPTER_MISSING || code === ErrorCode.HOST_ENDPOINT_UNKNOWN) return undefined;
    throw err;
  }
  const res = await conn.callTool('mhs__safety', { device_id: deviceId });
  if (res.isError)
    throw new HostError(ErrorCode.SAFETY_INTERLOCK_UNKNOWN, 'safety status unreadable', { device_id: deviceId });
  return res.structuredContent as unknown as SafetyStatus;
}
