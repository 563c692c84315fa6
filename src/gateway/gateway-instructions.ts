/**
 * The gateway server's `instructions` (HOST-064, 068): for each enabled endpoint its id and trust, devices with
 * mode, risk class, capabilities and fidelity gaps (rendered from the manifest, as the engine shows models), and
 * that MHS is not a safety channel: the disclosure a client has before its first call (HOST-003); with nothing
 * enabled, only that MHS is not available.
 */
import { presentEndpoint, renderEndpointText } from '../mhs/presentation.js';
import type { Manifest } from '../mhs/wire-types.js';

/** Said when no connector is enabled (HOST-068: the model is not told MHS is available). */
export const MHS_UNAVAILABLE =
  'MHS is not available on this host: no MHS connector is enabled. An operator must enable one (mhs-host endpoints enable); this server then lists its tools.';

const RULES = [
  'Every device command goes through the host: its policy, operator approvals, device gates and a tamper-evident ledger.',
  'A capability tool returns the full receipt: read its status; a rejected or failed receipt is not success, and an unknown outcome must be observed with mhs__operations before anything else is sent to that device.',
  'A call that needs an operator approval waits for it and may come back pending with an approval id: tell the user, and call the same tool again with the same arguments once it is approved. Changed arguments need a new approval.',
  'MHS is not a safety channel (MHS.SAFETY.NOT_CERTIFIED): mhs__estop is a governed stop for allow-listed devices, never a substitute for the physical emergency stop.',
  "Each device below is disclosed with its mode and fidelity gaps; the first tool result of this session on a device repeats that disclosure (HOST-003): tell the user before relying on the device's results.",
];

/** Instructions for the endpoints the gateway serves now. */
export function gatewayInstructions(manifests: readonly Manifest[]): string {
  if (!manifests.length) return MHS_UNAVAILABLE;
  return [
    'mhs-host MCP gateway: governed access to lab devices (MHS, an experimental integration).',
    ...RULES,
    '',
    ...manifests.map((m) => renderEndpointText(presentEndpoint(m))),
  ].join('\n');
}
