import { Command } from 'commander';
import { ErrorCode, HostError } from '../core/index.js';
import type { OperatorRuntime } from '../engine/operator-runtime.js';
import type { EstopOutcome } from '../policy/estop.js';
import { dbOption, operatorPrincipal, withOperator } from './operator-cli.js';

/** The endpoint id of `ref`, an endpoint id or a connector id. */
async function endpointOf(rt: OperatorRuntime, ref: string): Promise<string> {
  const list = await rt.directory.list();
  const hit = list.find((e) => e.endpoint_id === ref || e.connector_id === ref);
  if (!hit)
    throw new HostError(
      ErrorCode.HOST_ENDPOINT_UNKNOWN,
      `no endpoint ${ref}`,
      { ref, known: list.map((e) => e.endpoint_id) },
      { remediation: 'Run `mhs-host endpoints list` for endpoint and connector ids.' },
    );
  return hit.endpoint_id;
}

function report(what: 'estop' | 'reset', device: string, out: EstopOutcome): void {
  if (out.status === 'sent') {
    const r = out.receipt as { status?: string; receipt_id?: string };
    process.stdout.write(
      `${what === 'estop' ? 'e-stop engaged' : 'reset'} on ${device}: receipt ${r.receipt_id ?? '?'} ${r.status ?? ''}\n`,
    );
    return;
  }
  if (out.status === 'hardware_only') {
    process.stdout.write(`${device} has a hardware-only e-stop: use ${out.physical_ref ?? 'the physical stop'}\n`);
    process.exitCode = 2;
    return;
  }
  throw new HostError(out.error.mhs_code as ErrorCode, out.error.message, out.error.details ?? {}, {
    remediation: out.error.remediation,
  });
}

function action(what: 'estop' | 'reset'): Command {
  return new Command(what)
    .description(
      what === 'estop'
        ? "Engage a device's emergency stop through the trusted stop (no approval; the device must be allow-listed, HOST-094)"
        : 'Reset a device after an e-stop (an operator action, never automatic, HOST-071)',
    )
    .argument('<endpoint>', 'endpoint id or connector id')
    .argument('<device>', 'device id')
    .option('--operator <id>', 'your operator identity, recorded in the ledger (or MHS_OPERATOR)')
    .addOption(dbOption())
    .action(async (endpoint: string, device: string, o: { operator?: string; db?: string }) => {
      const who = operatorPrincipal(o.operator);
      await withOperator(o.db, async (rt) => {
        const id = await endpointOf(rt, endpoint);
        const op = { id: who.id, name: who.name };
        report(
          what,
          device,
          what === 'estop'
            ? await rt.services.safety.estop(id, device, op)
            : await rt.services.safety.reset(id, device, op),
        );
      });
    });
}

/** `mhs-host estop <endpoint> <device>` (issue 18 item 6). */
export const estopCommand = (): Command => action('estop');
/** `mhs-host reset <endpoint> <device>` (issue 18 item 6). */
export const resetCommand = (): Command => action('reset');

/** `mhs-host estop-allow <endpoint> <device> [--remove]`: the operator-managed trusted e-stop allow-list (HOST-094). */
export function estopAllowCommand(): Command {
  return new Command('estop-allow')
    .description("Allow (or with --remove, disallow) a device's trusted e-stop; recorded in the ledger (HOST-094)")
    .argument('<endpoint>', 'endpoint id or connector id')
    .argument('<device>', 'device id')
    .option('--remove', 'take the device off the allow-list')
    .option('--operator <id>', 'your operator identity, recorded in the ledger (or MHS_OPERATOR)')
    .addOption(dbOption())
    .action(async (endpoint: string, device: string, o: { remove?: boolean; operator?: string; db?: string }) => {
      const who = operatorPrincipal(o.operator);
      await withOperator(o.db, async (rt) => {
        const id = await endpointOf(rt, endpoint);
        if (!(await rt.directory.device(id, device)))
          throw new HostError(
            ErrorCode.NOT_FOUND,
            `no device ${device} on ${id}`,
            { endpoint_id: id, device_id: device },
            { remediation: 'Run `mhs-host endpoints show <connector-id>` for its devices.' },
          );
        await rt.services.estopAllow.set(id, device, !o.remove, { id: who.id, name: who.name });
        process.stdout.write(`${device} on ${id}: trusted e-stop ${o.remove ? 'not allowed' : 'allowed'}\n`);
      });
    });
}
