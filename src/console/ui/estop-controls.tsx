// The trusted e-stop (HOST-046: one action on the approvals' surface) and the per-device allowance (HOST-094).
import { api, ApiError } from './api.js';
import { useConsole } from './context.js';
import type { Estop } from './types.js';

interface EstopOutcome {
  status: 'sent' | 'error' | 'hardware_only';
  physical_ref?: string | null;
  error?: { mhs_code: string; message: string };
}

/** The physical stop of a device whose e-stop this host cannot press (HOST-046: it claims nothing). */
export function PhysicalStop({ estop }: { estop: Estop }) {
  return (
    <p class="physical" data-physical-ref={estop.physical_ref ?? ''}>
      Hardware e-stop only. This host cannot stop this device. Physical stop: {estop.physical_ref ?? 'unknown location'}
    </p>
  );
}

/** One click stops the device (software or both); a hardware-only device shows where its stop is. */
export function EstopButton(p: {
  endpointId: string;
  deviceId: string;
  name: string;
  estop: Estop | null | undefined;
}) {
  const { act, isOperator } = useConsole();
  if (!p.estop) return <span>E-stop kind unknown: this host cannot stop the device.</span>;
  if (p.estop.kind === 'hardware') return <PhysicalStop estop={p.estop} />;
  const press = () =>
    act(`E-stop ${p.deviceId}`, async () => {
      const out = await api<EstopOutcome>('POST', '/estop', { endpoint_id: p.endpointId, device_id: p.deviceId });
      if (out.status === 'hardware_only') {
        const where = out.physical_ref ?? 'unknown location';
        throw new ApiError(
          `hardware e-stop only: use the physical stop at ${where}`,
          200,
          'MHS.SAFETY.HARDWARE_ESTOP_ONLY',
        );
      }
      if (out.status === 'error') throw new ApiError(out.error?.message ?? 'e-stop failed', 200, out.error?.mhs_code);
    });
  return (
    <span>
      <button type="button" class="estop" disabled={!isOperator} aria-label={`E-stop ${p.name}`} onClick={press}>
        E-STOP
      </button>
      {p.estop.kind === 'both' && p.estop.physical_ref ? (
        <span class="physical"> Physical stop: {p.estop.physical_ref}</span>
      ) : null}
    </span>
  );
}

/** Allows (or removes) the trusted e-stop of one device: a recorded operator action (HOST-094). */
export function AllowEstop(p: { endpointId: string; deviceId: string; name: string; allowed: boolean }) {
  const { act, isOperator } = useConsole();
  const label = p.allowed ? 'Remove e-stop allowance' : 'Allow trusted e-stop';
  return (
    <span>
      {p.allowed ? null : <span class="muted">Trusted e-stop not yet allowed for this device. </span>}
      <button
        type="button"
        disabled={!isOperator}
        aria-label={`${label}: ${p.name}`}
        onClick={() =>
          act(`${label} ${p.deviceId}`, () =>
            api('POST', '/estop/allow', { endpoint_id: p.endpointId, device_id: p.deviceId, allowed: !p.allowed }),
          )
        }
      >
        {label}
      </button>
    </span>
  );
}
