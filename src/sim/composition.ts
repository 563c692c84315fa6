/**
 * `mhs.composition.run` (experimental, HOST-084; reserved in OpenMHS 0.9, served only with `--enable-composition`):
 * runs an ordered list of capability calls on one device, each as its own command (`<parent>.<n>`, receipt and
 * evidence entry), stops at the first step that does not complete, then records the composition's own receipt
 * carrying the composition digest and every child receipt.
 */
import { ErrorCode, HostError, isoAt } from '../core/index.js';
import {
  COMPOSITION_CAPABILITY,
  COMPOSITION_SCHEMA,
  COMPOSITION_TOOL,
  compositionDigest,
  type Composition,
} from '../mhs/composition.js';
import type { CapabilityBinding, ControlFields, Receipt } from '../mhs/wire-types.js';
import type { SimEndpoint } from './endpoint.js';
import { invokeCapability } from './invoke.js';
import { CONTROL_SCHEMA, validateAgainst, validateCapabilityInput } from './validation.js';

/** The composition's own receipt: a receipt plus its digest and its children (in order). */
export type CompositionReceipt = Receipt & { composition_digest: string; children: Receipt[] };

/**
 * Runs a composition. Faults (nothing executed, `isError`): `MHS.SCHEMA.INVALID_INPUT` (shape, more than one
 * device, unknown capability, a step's input), `MHS.SESSION.*` (a step outside the session),
 * `MHS.IDEMPOTENCY.CONFLICT`. A missing or wrong permit when a step needs one is a `rejected` parent receipt with
 * no child executed.
 */
export async function runComposition(
  ep: SimEndpoint,
  connectionKey: string,
  args: Record<string, unknown>,
): Promise<CompositionReceipt> {
  const { _mhs, ...rest } = args;
  validateAgainst(CONTROL_SCHEMA, _mhs ?? {}, '_mhs');
  validateAgainst(COMPOSITION_SCHEMA, rest, COMPOSITION_TOOL);
  const composition = rest as unknown as Composition;
  const control = (_mhs ?? {}) as ControlFields;
  const deviceIds = [...new Set(composition.steps.map((s) => s.device_id))];
  if (deviceIds.length !== 1)
    throw new HostError(ErrorCode.SCHEMA_INVALID_INPUT, 'a composition addresses exactly one device', {
      devices: deviceIds,
    });
  const device = ep.device(deviceIds[0] as string);
  ep.assertHardwareAllowed(device);
  const bindings: CapabilityBinding[] = composition.steps.map((s, index) => {
    const b = device.binding(s.capability_id);
    if (!b)
      throw new HostError(ErrorCode.SCHEMA_INVALID_INPUT, `device ${device.id} has no capability ${s.capability_id}`, {
        index,
        capability_id: s.capability_id,
      });
    validateCapabilityInput(b, s.input);
    return b;
  });
  const caps = bindings.map((b) => b.capability_id);
  const session =
    control.session_id !== undefined
      ? caps.map((c) => ep.sessions.use(control.session_id as string, device.id, c))[0]!
      : ep.sessions.implicit(
          connectionKey,
          device.id,
          device.profile.capabilities.map((c) => c.capability_id),
          ep.replay ? 'replay' : 'live',
        );
  const digest = compositionDigest(composition);
  const commandId = control.command_id ?? ep.ids.next('command');

  ep.pruneRetention();
  const held = ep.receipts.get(commandId);
  if (held) {
    if (held.inputDigest !== digest)
      throw new HostError(ErrorCode.IDEMPOTENCY_CONFLICT, `command ${commandId} was used with another input`, {
        command_id: commandId,
        input_digest: digest,
        retained_digest: held.inputDigest,
      });
    const current = held.pending ? await held.pending : held.receipt;
    return { ...(current as CompositionReceipt), replayed: true };
  }

  const clock = ep.opts.clock;
  const startedAt = clock.now();
  const before = device.revision;
  let finished: (r: Receipt) => void = () => undefined;
  const done = new Promise<Receipt>((resolve) => (finished = resolve));
  const retained = { inputDigest: digest, deviceId: device.id, retainedAt: startedAt };
  ep.receipts.set(commandId, { receipt: { command_id: commandId } as Receipt, ...retained, pending: done });

  const children: Receipt[] = [];
  let error: Receipt['error'] = null;
  let status: Receipt['status'] = 'completed';
  const needsPermit = bindings.some((b) => b.permit.required);
  const bad = needsPermit
    ? ep.permits.check(control.permit_id, session.session_id, COMPOSITION_CAPABILITY, digest)
    : null;
  if (bad) {
    status = 'rejected';
    error = new HostError(bad.code, `permit refused: ${bad.code}`, bad.details, {
      remediation: 'obtain one permit for exactly this session and composition digest',
    }).toWire();
  } else {
    if (needsPermit && control.permit_id) ep.permits.consume(control.permit_id, commandId);
    for (const [index, step] of composition.steps.entries()) {
      const child = await invokeCapability(ep, {
        connectionKey,
        device,
        binding: bindings[index] as CapabilityBinding,
        input: step.input,
        control: { session_id: session.session_id, command_id: `${commandId}.${index + 1}` },
        composed: { digest, parentCommandId: commandId, index },
      });
      children.push(child);
      if (child.status !== 'completed') {
        status = child.status === 'rejected' ? 'rejected' : 'failed';
        error = child.error;
        break;
      }
    }
  }
  let outcome: Pick<Receipt, 'status' | 'revisions' | 'state_hash' | 'output' | 'error'> = {
    status,
    revisions: { before, after: device.revision },
    state_hash: device.stateHash(),
    output: {
      composition_digest: digest,
      steps: children.map((c) => ({
        capability_id: c.capability_id,
        status: c.status,
        output: c.output,
        error_code: c.error?.mhs_code ?? null,
      })),
      not_run: composition.steps.length - children.length,
    },
    error,
  };
  // Replay (§10): the composition's own recorded receipt is matched after its children, like any other receipt.
  if (ep.replay && status === 'completed') {
    const rec = ep.replay.next(device.id, COMPOSITION_CAPABILITY, digest);
    outcome =
      rec instanceof HostError
        ? { ...outcome, status: 'rejected', error: rec.toWire() }
        : {
            status: rec.status,
            revisions: rec.revisions,
            state_hash: rec.state_hash,
            output: rec.output,
            error: rec.error,
          };
  }
  const body = {
    mhs_version: '0.9',
    receipt_id: ep.ids.next('receipt'),
    command_id: commandId,
    session_id: session.session_id,
    endpoint_id: ep.opts.endpointId,
    device_id: device.id,
    capability_id: COMPOSITION_CAPABILITY,
    mode: ep.replay ? ('replay' as const) : device.profile.mode,
    input_digest: digest,
    operation_id: null,
    effects: children.flatMap((c) => c.effects),
    started_at: isoAt(startedAt),
    finished_at: isoAt(clock.now()),
    ...outcome,
    composition_digest: digest,
    children,
  };
  const receipt = ep.record(body) as CompositionReceipt;
  ep.receipts.set(commandId, { receipt, ...retained });
  finished(receipt);
  return receipt;
}
