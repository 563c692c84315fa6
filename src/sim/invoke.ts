/**
 * The capability call (wire contract §4-§7): session, schema, idempotency by command_id, refusals
 * (receipts, isError false), then at most one execution per command_id with a receipt before the
 * deadline (`running` + operation_id when the model needs longer, CORE-100).
 */
import { ErrorCode, H, HostError, isoAt, toHostError } from '../core/index.js';
import type { CapabilityBinding, ControlFields, Receipt } from '../mhs/wire-types.js';
import type { SimDevice } from './device.js';
import type { Retained, SimEndpoint } from './endpoint.js';
import { planExecution, type ExecutionPlan } from './physics.js';
import { LIMITS } from './sim-options.js';
import { validateCapabilityInput } from './validation.js';

/** Capability call after the tool layer split `_mhs` from the input. */
export interface CapabilityCall {
  connectionKey: string;
  device: SimDevice;
  binding: CapabilityBinding;
  input: Record<string, unknown>;
  control: ControlFields;
  /**
   * Set for a child of a composition (experimental, HOST-084): the parent's permit covers it, it runs to its final
   * receipt (never `running`), and its receipt names its composition.
   */
  composed?: { digest: string; parentCommandId: string; index: number };
}

/** Runs a capability call; throws HostError for faults (isError true), returns a receipt otherwise. */
export async function invokeCapability(ep: SimEndpoint, call: CapabilityCall): Promise<Receipt> {
  const { device, binding, input, control } = call;
  const capId = binding.capability_id;
  ep.assertHardwareAllowed(device);
  const session =
    control.session_id !== undefined
      ? ep.sessions.use(control.session_id, device.id, capId)
      : ep.sessions.implicit(
          call.connectionKey,
          device.id,
          device.profile.capabilities.map((c) => c.capability_id),
          ep.replay ? 'replay' : 'live',
        );
  validateCapabilityInput(binding, input);
  const inputDigest = H(input);
  const commandId = control.command_id ?? ep.ids.next('command');

  ep.pruneRetention();
  const held = ep.receipts.get(commandId);
  if (held) {
    if (held.inputDigest !== inputDigest) {
      throw new HostError(ErrorCode.IDEMPOTENCY_CONFLICT, `command ${commandId} was used with another input`, {
        command_id: commandId,
        input_digest: inputDigest,
        retained_digest: held.inputDigest,
      });
    }
    const current = held.pending ? await held.pending : held.receipt;
    return { ...current, replayed: true };
  }

  const clock = ep.opts.clock;
  const startedAt = clock.now();
  const before = device.revision;
  const base = {
    mhs_version: '0.9',
    command_id: commandId,
    session_id: session.session_id,
    endpoint_id: ep.opts.endpointId,
    device_id: device.id,
    capability_id: capId,
    mode: ep.replay ? ('replay' as const) : device.profile.mode,
    input_digest: inputDigest,
    started_at: isoAt(startedAt),
    ...(call.composed
      ? {
          composition: {
            digest: call.composed.digest,
            parent_command_id: call.composed.parentCommandId,
            index: call.composed.index,
          },
        }
      : {}),
  };
  const retain = (r: Receipt, extra: Partial<Retained> = {}): Receipt => {
    ep.receipts.set(commandId, { receipt: r, inputDigest, deviceId: device.id, retainedAt: startedAt, ...extra });
    return r;
  };
  const reject = (err: HostError): Receipt =>
    retain(
      ep.record({
        ...base,
        receipt_id: ep.ids.next('receipt'),
        status: 'rejected',
        operation_id: null,
        revisions: { before, after: before },
        state_hash: device.stateHash(),
        effects: [],
        output: null,
        error: err.toWire(),
        finished_at: isoAt(clock.now()),
      }),
    );

  if (ep.replay) {
    const rec = ep.replay.next(device.id, capId, inputDigest);
    if (rec instanceof HostError) return reject(rec);
    return retain(
      ep.record({
        ...base,
        receipt_id: ep.ids.next('receipt'),
        status: rec.status,
        operation_id: null,
        revisions: rec.revisions,
        state_hash: rec.state_hash,
        effects: rec.effects,
        output: rec.output,
        error: rec.error,
        finished_at: isoAt(clock.now()),
      }),
    );
  }

  // Refusals, in the order a real device would check them.
  if (device.estopEngaged) {
    return reject(
      new HostError(
        ErrorCode.SAFETY_ESTOP_ACTIVE,
        `e-stop engaged on ${device.id}`,
        {},
        {
          remediation: 'an operator must reset the device (mhs__reset)',
        },
      ),
    );
  }
  const blocking = device.blockingInterlocks(capId);
  if (blocking.length) {
    const unknown = blocking.some((i) => i.state === 'unknown');
    return reject(
      new HostError(
        unknown ? ErrorCode.SAFETY_INTERLOCK_UNKNOWN : ErrorCode.SAFETY_INTERLOCK_OPEN,
        `interlock not closed: ${blocking.map((i) => `${i.id}=${i.state}`).join(', ')}`,
        { interlocks: blocking.map((i) => ({ ...i })) },
        {
          remediation: unknown
            ? 'the interlock state is unknown: check the device and have an operator confirm it (mhs__reset)'
            : 'close the interlock (e.g. shut the door), then retry',
        },
      ),
    );
  }
  if (control.expected_revision !== undefined && control.expected_revision !== device.revision) {
    return reject(
      new HostError(
        ErrorCode.STATE_STALE_REVISION,
        'the device revision moved',
        { expected: control.expected_revision, actual: device.revision },
        { remediation: 'read the device (mhs__read) and decide again against its current revision' },
      ),
    );
  }
  if (binding.permit.required && !call.composed) {
    const bad = ep.permits.check(control.permit_id, session.session_id, capId, inputDigest);
    if (bad)
      return reject(
        new HostError(bad.code, `permit refused: ${bad.code}`, bad.details, {
          remediation: 'obtain a new permit from an operator for exactly this session, capability and input',
        }),
      );
  }
  let plan: ExecutionPlan;
  try {
    plan = planExecution(device.def.model, capId, input, device.state, device.random);
  } catch (err) {
    if (err instanceof HostError) return reject(err);
    throw err;
  }
  if (plan.durationMs > binding.max_duration_ms) {
    return reject(
      new HostError(ErrorCode.LIMIT_DURATION, `would take ${Math.round(plan.durationMs)} ms`, {
        duration_ms: Math.round(plan.durationMs),
        max_duration_ms: binding.max_duration_ms,
      }),
    );
  }

  // Execute: at most once per command_id.
  if (binding.permit.required && control.permit_id && !call.composed) ep.permits.consume(control.permit_id, commandId);
  device.countExecution(commandId);
  const receiptId = ep.ids.next('receipt');
  const wallMs = plan.durationMs / ep.timeScale;
  const deadline = Math.min(control.deadline_ms ?? binding.max_duration_ms, LIMITS.max_deadline_ms);
  const margin = Math.max(1, Math.min(100, deadline * 0.2));
  let finished: (r: Receipt) => void = () => undefined;
  const done = new Promise<Receipt>((resolve) => (finished = resolve));
  // Final receipt of this execution, recorded in the evidence chain and retained by command_id.
  const settle = (
    status: 'completed' | 'failed',
    effects: Receipt['effects'],
    output: Receipt['output'],
    error: Receipt['error'],
  ): void =>
    finished(
      retain(
        ep.record({
          ...base,
          receipt_id: receiptId,
          status,
          operation_id: opId,
          revisions: { before, after: device.revision },
          state_hash: device.stateHash(),
          effects,
          output,
          error,
          finished_at: isoAt(clock.now()),
        }),
      ),
    );
  const complete = (): void => {
    // Another command finished meanwhile: apply this one to the state as it is now (no lost update).
    let applied = plan;
    if (device.revision !== before) {
      try {
        applied = planExecution(device.def.model, capId, input, device.state, device.random);
      } catch (err) {
        settle('failed', [], null, toHostError(err).toWire());
        return;
      }
    }
    device.state = applied.next;
    device.revision += 1;
    settle('completed', applied.effects, applied.output, null);
  };
  const fits = call.composed !== undefined || wallMs + margin <= deadline;
  const opId = fits ? null : ep.ids.next('operation');
  const timer = clock.setTimeout(complete, wallMs);
  const cancel = (): void => {
    clock.clearTimeout(timer);
    settle(
      'failed',
      [],
      null,
      new HostError(ErrorCode.SAFETY_ESTOP_ACTIVE, 'stopped by e-stop before completion').toWire(),
    );
  };
  if (fits) {
    const placeholder = { ...base, receipt_id: receiptId } as unknown as Receipt;
    ep.receipts.set(commandId, {
      receipt: placeholder,
      inputDigest,
      deviceId: device.id,
      retainedAt: startedAt,
      cancel,
      pending: done,
    });
    return done;
  }
  ep.operations.set(opId as string, commandId);
  return retain(
    ep.record({
      ...base,
      receipt_id: receiptId,
      status: 'running',
      operation_id: opId,
      revisions: { before, after: before },
      state_hash: device.stateHash(),
      effects: [],
      output: null,
      error: null,
      finished_at: null,
    }),
    { cancel },
  );
}
