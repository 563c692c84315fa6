/**
 * The fixed read tools of the model surface (`mhs__devices`, `mhs__read`, `mhs__safety`, `mhs__operations`):
 * reads only, no command intent, no device gate. `mhs__operations` on an unsettled command goes through the
 * engine's reconciliation (HOST-037, 091), so observing an unknown outcome never re-executes it. The deployment
 * policy (HOST-090) applies to reads, operations and (while disabled) safety; `mhs__devices` is host-local discovery
 * and always answers.
 */
import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { Ledger } from '../ledger/ledger-types.js';
import { presentEndpoint } from '../mhs/presentation.js';
import { faultError } from './call-outcome.js';
import { RemoteEndpoint } from './endpoint-handle.js';
import type { EndpointHandle } from './endpoint-handle.js';
import { unsettledCommand } from './recovery.js';
import type { Engine } from './engine.js';

/**
 * What the fixed tools need from the engine: endpoint handles, so an endpoint another process attaches (issue 19) is
 * listed and read through that process.
 */
export type FixedToolEngine = Pick<Engine, 'read' | 'handle' | 'handles' | 'pending' | 'reconcile'>;

const READ_TIMEOUT_MS = 10_000;

function badInput(message: string, details: Record<string, unknown>, remediation: string): HostError {
  return new HostError(ErrorCode.SCHEMA_INVALID_INPUT, message, details, { remediation });
}

/** The endpoint holding `deviceId` (or the one named); refuses an unknown or ambiguous device. */
export async function endpointForDevice(
  engine: FixedToolEngine,
  deviceId: string,
  endpointId?: string,
): Promise<EndpointHandle> {
  const eps = endpointId
    ? [await engine.handle(endpointId).catch(() => undefined)].filter((e): e is EndpointHandle => !!e)
    : await engine.handles();
  const hits = eps.filter((e) => e.manifest.devices.some((d) => d.device_id === deviceId));
  if (hits.length === 1) return hits[0] as EndpointHandle;
  if (hits.length > 1)
    throw badInput(
      `device ${deviceId} is on more than one endpoint`,
      { device_id: deviceId, endpoints: hits.map((e) => e.endpointId) },
      'Name the endpoint_id as well.',
    );
  throw badInput(
    `no attached endpoint has device ${deviceId}`,
    { device_id: deviceId, ...(endpointId ? { endpoint_id: endpointId } : {}) },
    'Pick a device listed by mhs__devices.',
  );
}

/** `mhs__devices`: the presentation of each attached endpoint, rendered from its manifest (HOST-013). */
export async function devicesResult(engine: FixedToolEngine, endpointId?: string): Promise<Record<string, unknown>> {
  const eps = (await engine.handles()).filter((e) => !endpointId || e.endpointId === endpointId);
  return { endpoints: eps.map((e) => presentEndpoint(e.manifest)) };
}

/** `mhs__read` through the engine's read path. */
export async function readResult(
  engine: FixedToolEngine,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const ep = await endpointForDevice(engine, String(args.device_id), args.endpoint_id as string | undefined);
  const r = await engine.read(ep.endpointId, String(args.device_id), args.resource as string | undefined);
  return { endpoint_id: ep.endpointId, ...r };
}

/** `mhs__safety {device_id}` on the device's endpoint (wire contract §7). */
export async function safetyResult(
  engine: FixedToolEngine,
  args: Record<string, unknown>,
  traceparent: string,
): Promise<Record<string, unknown>> {
  const deviceId = String(args.device_id);
  const ep = await endpointForDevice(engine, deviceId, args.endpoint_id as string | undefined);
  await ep.admit('safety', deviceId); // HOST-090: refused only while the deployment is disabled
  const r = await ep
    .callTool('mhs__safety', { device_id: deviceId }, { timeoutMs: READ_TIMEOUT_MS, meta: { traceparent } })
    .catch((e: unknown) => {
      throw toHostError(e);
    });
  if (r.isError) throw faultError(r);
  return { endpoint_id: ep.endpointId, ...r.structuredContent };
}

/**
 * `mhs__operations {command_id}`: an unsettled command is reconciled by the engine (the gate reopens only on a
 * settled outcome); a settled one is looked up at its endpoint (found from the ledger's intent).
 */
export async function operationsResult(
  engine: FixedToolEngine,
  ledger: Ledger,
  commandId: string,
  traceparent: string,
): Promise<Record<string, unknown>> {
  if (engine.pending().some((p) => p.commandId === commandId)) {
    const [r] = await engine.reconcile({ commandId });
    if (r) return { command_id: commandId, reconciled: true, outcome: r.outcome, method: r.method, receipt: r.receipt };
  }
  const entries = await ledger.byCommand(commandId);
  const intent = entries.find((e) => e.kind === 'command.intent');
  const ep = intent ? await engine.handle(String(intent.endpoint_id)).catch(() => undefined) : undefined;
  if (!ep)
    throw badInput(
      `command ${commandId} is not a command of this host on an attached endpoint`,
      { command_id: commandId, reason: 'not_found' },
      'Use a command_id from an earlier capability tool result.',
    );
  await ep.admit('operations', String(intent?.device_id), { command_id: commandId }); // HOST-090
  // Issue 19: an unsettled command of an endpoint another process attaches is reconciled by that process (its gate).
  if (ep instanceof RemoteEndpoint && unsettledCommand(entries)) {
    const [r] = await engine.reconcile({ commandId });
    if (r) return { command_id: commandId, reconciled: true, outcome: r.outcome, method: r.method, receipt: r.receipt };
  }
  const r = await ep
    .callTool('mhs__operations', { command_id: commandId }, { timeoutMs: READ_TIMEOUT_MS, meta: { traceparent } })
    .catch((e: unknown) => {
      throw toHostError(e);
    });
  if (r.isError) throw faultError(r);
  return { command_id: commandId, reconciled: false, receipt: r.structuredContent };
}
