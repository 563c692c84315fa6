import { Command } from 'commander';
import { openCliRuntime, withRuntimeOptions } from './cli-runtime.js';
import type { RuntimeFlags } from './cli-runtime.js';

/**
 * `mhs-host reconcile <endpoint>`: settles the unsettled commands of one endpoint from the endpoint itself
 * (HOST-091: `mhs__operations`, then a same-id retry answered from retention; nothing executes twice), prints one
 * JSON line per command, then every device gate of that endpoint still held in the store and by whom. This is how
 * an operator reopens a device that a crashed host process left gated for the others. Exits 1 while any gate of
 * the endpoint stays shut.
 */
export function reconcileCommand(): Command {
  const cmd = new Command('reconcile')
    .description('Reconcile the unsettled commands of an endpoint and show the device gates still held')
    .argument('<endpoint>', 'connector id or endpoint id (see `mhs-host endpoints list`)')
    .option('--wait', "wait past a command's deadline when the endpoint has no record of it yet (issue 16)");
  return withRuntimeOptions(cmd).action(async (endpoint: string, o: RuntimeFlags & { wait?: boolean }) => {
    const rt = await openCliRuntime(o, { runtime: { engine: { reconcileOnAttach: false } } });
    try {
      const ep = await rt.connectEndpoint(endpoint);
      const results = [];
      for (const r of await rt.engine.reconcile({ endpointId: ep.endpointId })) {
        // No record before the deadline proves nothing: still unknown, settled at retry_at (or now, with --wait).
        const again = o.wait && r.retryAt !== undefined;
        results.push(again ? ((await rt.engine.reconcile({ commandId: r.commandId, untilSettled: true }))[0] ?? r) : r);
      }
      for (const r of results)
        process.stdout.write(
          `${JSON.stringify({
            command_id: r.commandId,
            device_id: r.deviceId,
            outcome: r.outcome,
            method: r.method,
            ...(r.receipt ? { status: r.receipt.status, replayed: r.receipt.replayed === true } : {}),
            ...(r.retryAt !== undefined ? { retry_at: new Date(r.retryAt).toISOString() } : {}),
          })}\n`,
        );
      const held = await rt.ledger.deviceGates(ep.endpointId);
      for (const g of held) {
        const alive = await rt.ledger.ownerRunning(g.owner);
        const whose =
          g.owner === rt.ledger.owner
            ? 'still unsettled after reconciling'
            : alive === true
              ? 'its host process is running'
              : alive === false
                ? 'its host process is gone'
                : 'its host process holds no lease here and cannot be checked from this machine';
        process.stderr.write(`gate shut: ${g.device_id} by ${g.command_id} (${g.reason}, ${g.owner}: ${whose})\n`);
      }
      process.stderr.write(
        `${ep.endpointId}: ${held.length ? `${held.length} device gate(s) still shut` : 'every device gate open'}\n`,
      );
      if (held.length) process.exitCode = 1;
    } finally {
      await rt.close();
    }
  });
}
