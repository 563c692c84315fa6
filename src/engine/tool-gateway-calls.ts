/**
 * The fixed tools only the MCP gateway's surface offers (wire contract §4, HOST-062): `mhs__inspect` (the admitted
 * manifest or one device profile), `mhs__evidence` (export into the host's store, or verify the endpoint's chain
 * and the host ledger) and `mhs__estop`, the trusted stop of HOST-094: it bypasses approval, never enablement,
 * the e-stop allow-list or device binding, and is recorded as an `estop.request`/`estop.receipt` pair.
 */
import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { Ledger } from '../ledger/ledger-types.js';
import type { SafetyActions } from '../policy/estop.js';
import { faultError } from './call-outcome.js';
import type { CallPrincipal } from './call-types.js';
import type { Engine } from './engine.js';
import { endpointForDevice } from './tool-fixed-calls.js';
import type { FixedToolEngine } from './tool-fixed-calls.js';

const EVIDENCE_TIMEOUT_MS = 30_000;

/** `mhs__inspect {endpoint_id?, device_id?}`. */
export async function inspectResult(
  engine: FixedToolEngine,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const endpointId = args.endpoint_id as string | undefined;
  if (typeof args.device_id === 'string') {
    const ep = await endpointForDevice(engine, args.device_id, endpointId);
    const device = ep.manifest.devices.find((d) => d.device_id === args.device_id);
    return { endpoint_id: ep.endpointId, manifest_digest: ep.manifest.manifest_digest, device };
  }
  const eps = (await engine.handles()).filter((e) => !endpointId || e.endpointId === endpointId);
  if (endpointId && !eps.length)
    throw new HostError(
      ErrorCode.SCHEMA_INVALID_INPUT,
      `no attached endpoint ${endpointId}`,
      { endpoint_id: endpointId },
      { remediation: 'Pick an endpoint listed by mhs__devices.' },
    );
  return { manifests: eps.map((e) => e.manifest) };
}

/** `mhs__evidence {action, endpoint_id?}`. */
export async function evidenceResult(
  engine: FixedToolEngine & Pick<Engine, 'collectEvidence'>,
  ledger: Pick<Ledger, 'verify'>,
  args: Record<string, unknown>,
  traceparent: string,
): Promise<Record<string, unknown>> {
  const endpointId = args.endpoint_id as string | undefined;
  const eps = (await engine.handles()).filter((e) => !endpointId || e.endpointId === endpointId);
  if (endpointId && !eps.length)
    throw new HostError(
      ErrorCode.SCHEMA_INVALID_INPUT,
      `no attached endpoint ${endpointId}`,
      { endpoint_id: endpointId },
      { remediation: 'Pick an endpoint listed by mhs__devices.' },
    );
  if (args.action === 'export') {
    const out = [];
    for (const ep of eps) out.push(...(await engine.collectEvidence(ep.endpointId)));
    return {
      exported: out.map((c) => ({
        endpoint_id: c.endpointId,
        genesis_digest: c.genesisDigest,
        head_digest: c.headDigest,
        entries: c.entries,
        ledger_seq: c.seq,
      })),
    };
  }
  const endpoints = [];
  for (const ep of eps) {
    const r = await ep
      .callTool('mhs__evidence', { action: 'verify' }, { timeoutMs: EVIDENCE_TIMEOUT_MS, meta: { traceparent } })
      .catch((e: unknown) => {
        throw toHostError(e);
      });
    if (r.isError) throw faultError(r);
    endpoints.push({ endpoint_id: ep.endpointId, ...r.structuredContent });
  }
  return { endpoints, host_ledger: await ledger.verify() };
}

/** `mhs__estop {device_id, endpoint_id?}` through the trusted stop; refused without one. */
export async function estopResult(
  engine: FixedToolEngine,
  safety: Pick<SafetyActions, 'estop'> | undefined,
  args: Record<string, unknown>,
  principal: CallPrincipal | undefined,
): Promise<Record<string, unknown>> {
  const deviceId = String(args.device_id);
  const ep = await endpointForDevice(engine, deviceId, args.endpoint_id as string | undefined);
  if (!safety)
    throw new HostError(
      ErrorCode.HOST_POLICY_DENIED,
      'this host has no trusted e-stop route for this surface',
      { endpoint_id: ep.endpointId, device_id: deviceId },
      { remediation: 'Use the operator console or `mhs-host` operator e-stop, or the physical stop.' },
    );
  const who = principal ?? { kind: 'agent' as const, id: 'unknown' };
  const out = await safety.estop(ep.endpointId, deviceId, {
    id: who.id,
    name: who.name ?? who.id,
    kind: who.kind === 'human' ? 'human' : 'agent',
  });
  if (out.status === 'error')
    throw new HostError(
      out.error.mhs_code as ErrorCode,
      out.error.message,
      {
        ...out.error.details,
        endpoint_id: ep.endpointId,
        device_id: deviceId,
      },
      { remediation: out.error.remediation },
    );
  return { endpoint_id: ep.endpointId, device_id: deviceId, ...out };
}
