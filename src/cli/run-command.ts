import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { Command } from 'commander';
import { ErrorCode, HostError, RealClock } from '../core/index.js';
import { openDb, resolveDbLocation } from '../ledger/index.js';
import { createOpenwopHost } from '../openwop/host.js';
import { mhsNodes } from '../openwop/nodes/mhs-nodes.js';
import { openHostRuntime } from '../engine/host-runtime.js';
import { DEFAULT_POLICY, loadPolicyFile } from '../policy/index.js';
import type { RunEvent } from '../openwop/types.js';

function line(e: RunEvent): string {
  const p = e.payload;
  const extra =
    e.type === 'node.failed' || e.type === 'run.failed'
      ? ` ${JSON.stringify(p.error)}`
      : e.type === 'node.completed'
        ? ` outputs=${JSON.stringify(p.outputs)}`
        : e.type === 'interrupt.requested'
          ? ` kind=${String(p.kind)}`
          : '';
  return `${String(e.sequence).padStart(4)} ${e.timestamp} ${e.type}${e.nodeId ? ` [${e.nodeId}]` : ''}${extra}`;
}

/**
 * `mhs-host run workflows/<file> [--inputs JSON] [--approve] [--db PATH]`: registers the file's
 * workflow (and the other definitions in its folder, for sub-workflows), runs it locally and prints
 * each event as it is appended. MHS nodes run over the enabled connectors of the store. Workflow
 * approval gates are accepted when `--approve` is given; an MHS approval (R2+) is never accepted
 * here: an operator decides it with `mhs-host approvals approve|deny` or in the console of a
 * `mhs-host serve` on the same store. Exits 0 when the run
 * completes, 1 otherwise.
 */
export function runCommand(): Command {
  return new Command('run')
    .description('Run a workflow definition locally, printing its events')
    .argument('<file>', 'workflow definition (JSON)')
    .option('--inputs <json>', 'run inputs (JSON object)', '{}')
    .option('--approve', 'accept approval interrupts automatically (local use)')
    .option('--db <location>', 'store (default MHS_HOST_DB or ./.mhs-host/host.db)')
    .option('--no-mhs', 'without the MHS engine (workflows with mhs.* nodes are refused)')
    .option('--policy <file>', 'approval policy JSON (default: deny by default, a human approves R2+)')
    .action(
      async (file: string, opts: { inputs: string; approve?: boolean; db?: string; mhs: boolean; policy?: string }) => {
        let def: { id?: string };
        let inputs: Record<string, unknown>;
        try {
          def = JSON.parse(readFileSync(file, 'utf8')) as { id?: string };
          inputs = JSON.parse(opts.inputs) as Record<string, unknown>;
        } catch (err) {
          throw new HostError(ErrorCode.VALIDATION_ERROR, `cannot read ${file} or --inputs: ${(err as Error).message}`);
        }
        const clock = new RealClock();
        // The clock's timers do not hold the process open; a listening port does, until the run ends.
        const keepAlive = new MessageChannel();
        keepAlive.port1.on('message', () => undefined);
        const db = await openDb(resolveDbLocation({ flag: opts.db }));
        // The MHS engine over the enabled connectors: mhs.invoke / mhs.task run through the governed call.
        const policy = opts.policy ? loadPolicyFile(opts.policy) : DEFAULT_POLICY;
        const mhs = opts.mhs ? await openHostRuntime({ db, clock, policy, attachEnabled: true }) : undefined;
        const nodes = mhs
          ? mhsNodes({
              engine: mhs.engine,
              ledger: mhs.ledger,
              approvals: { events: mhs.services.events, gate: mhs.services.gate },
            })
          : [];
        const host = await createOpenwopHost({ db, clock, nodes, workflowsDir: dirname(file) });
        try {
          await host.catalog.register(def, `file:${file}`);
          const { run } = await host.runs.createRun({ workflowId: def.id!, inputs }, { principal: 'cli' });
          let printed = -1;
          const onEvent = (e: RunEvent): void => {
            if (e.sequence <= printed) return;
            printed = e.sequence;
            process.stdout.write(`${line(e)}\n`);
            if (e.type === 'interrupt.requested' && e.nodeId) {
              const mhsApproval =
                (e.payload.data as { artifactType?: string } | undefined)?.artifactType === 'mhs.approval';
              if (opts.approve && e.payload.kind === 'approval' && !mhsApproval) {
                void host.runs.resolveInterrupt(run.runId, e.nodeId, { action: 'accept' }, { principal: 'cli' });
              } else {
                process.stdout.write(
                  mhsApproval
                    ? `     waiting for an operator: mhs-host approvals list (then approve|deny <id> --operator <you>)\n`
                    : `     waiting: POST /v1/runs/${run.runId}/interrupts/${e.nodeId} (or rerun with --approve)\n`,
                );
              }
            }
          };
          let live = false;
          const early: RunEvent[] = [];
          const off = host.store.subscribe(run.runId, (e) => (live ? onEvent(e) : early.push(e)));
          for (const e of await host.store.events(run.runId)) onEvent(e);
          live = true;
          for (const e of early) onEvent(e);
          const status = await host.runs.waitTerminal(run.runId);
          off();
          process.stdout.write(`run ${run.runId} ${status}\n`);
          process.exitCode = status === 'completed' ? 0 : 1;
        } finally {
          await host.close(1000);
          await mhs?.close();
          await db.close();
          keepAlive.port1.close();
        }
      },
    );
}
