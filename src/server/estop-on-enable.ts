import type { Clock } from '../core/index.js';
import type { AttachStatus } from '../engine/attach-retry.js';
import type { EstopAllowList } from '../policy/estop-allow.js';
import type { PolicyConfig } from '../policy/policy-config.js';
import type { SafetyActions } from '../policy/estop.js';
import type { EndpointDirectory, EndpointSummary } from '../policy/ports.js';

/** What {@link allowEstopOnEnable} reads and writes. */
export interface EstopOnEnableDeps {
  directory: EndpointDirectory;
  estopAllow: EstopAllowList;
  safety: SafetyActions;
  clock: Clock;
  /** The approval policy; without it (or unreadable) nothing is allowed here: the allowance is a privilege. */
  policy?: PolicyConfig | (() => PolicyConfig | null | Promise<PolicyConfig | null>);
  attachments?: () => AttachStatus[];
  connectionChanges?: (fn: () => void) => () => void;
  /** Longest wait for a just-enabled connector's manifest (its devices), default 30 000 ms. */
  waitMs?: number;
}

async function summaryOf(d: EstopOnEnableDeps, connectorId: string): Promise<EndpointSummary | undefined> {
  return (await d.directory.list()).find((e) => e.connector_id === connectorId);
}

/**
 * The devices of `connectorId` once its manifest is known: at once when it was admitted before, else after the
 * attach this enablement started (`connectionChanges`), which either admits the manifest or fails (then none).
 */
async function devicesOnceKnown(d: EstopOnEnableDeps, connectorId: string): Promise<EndpointSummary | undefined> {
  const now = await summaryOf(d, connectorId);
  if ((now && now.devices.length) || !d.connectionChanges) return now;
  const subscribe = d.connectionChanges;
  return new Promise((resolve) => {
    let done = false;
    const finish = (s: EndpointSummary | undefined) => {
      if (done) return;
      done = true;
      off();
      d.clock.clearTimeout(timer);
      resolve(s);
    };
    const check = () =>
      void summaryOf(d, connectorId).then(
        (s) => {
          const a = d.attachments?.().find((x) => x.connector_id === connectorId);
          if ((s && s.devices.length) || a?.state === 'retrying') finish(s);
        },
        () => finish(undefined),
      );
    const off = subscribe(check);
    const timer = d.clock.setTimeout(
      () => void summaryOf(d, connectorId).then(finish, () => finish(undefined)),
      d.waitMs ?? 30_000,
    );
    check();
  });
}

async function readPolicy(d: EstopOnEnableDeps): Promise<PolicyConfig | null> {
  try {
    return (typeof d.policy === 'function' ? await d.policy() : d.policy) ?? null;
  } catch {
    return null;
  }
}

/**
 * HOST-094 with HOST-046: enabling a connector is also the operator's allowance of its devices' trusted e-stop,
 * so every device with a software (or both) e-stop gets its one-click stop from the same action, each allowance
 * recorded in the ledger with that operator (`operator.enable`, `scope: "estop"`). Unless the policy says
 * otherwise: a policy whose `estopAllow` names this endpoint decides its devices alone, and without a readable
 * policy nothing is allowed here. Hardware-only devices are left alone (the host cannot stop them, HOST-046).
 * Returns the device ids newly allowed.
 */
export async function allowEstopOnEnable(
  d: EstopOnEnableDeps,
  connectorId: string,
  operator: { id: string; name: string },
): Promise<string[]> {
  const policy = await readPolicy(d);
  if (!policy) return [];
  const e = await devicesOnceKnown(d, connectorId);
  if (!e || (policy.estopAllow ?? []).some((a) => a.endpoint_id === e.endpoint_id)) return [];
  const allowed: string[] = [];
  for (const dev of e.devices) {
    if (dev.estop?.kind !== 'software' && dev.estop?.kind !== 'both') continue;
    if (await d.safety.allowed(e.endpoint_id, dev.device_id)) continue;
    await d.estopAllow.set(e.endpoint_id, dev.device_id, true, operator);
    allowed.push(dev.device_id);
  }
  return allowed;
}
