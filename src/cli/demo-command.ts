import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { ErrorCode, HostError, RealClock, isoAt } from '../core/index.js';
import { sessionDisclosureText } from '../engine/index.js';
import type { Engine, TaskResult, TaskSpec } from '../engine/index.js';
import { exportPackage, verifyPackage } from '../ledger/index.js';
import type { Db, DurableLedger } from '../ledger/index.js';
import type { ConnectorRow } from '../mhs/connector-row.js';
import { openCliRuntime } from './cli-runtime.js';
import { shutdownAndThrow, startOtlpExport } from './otlp-export.js';
import { printTaskSummary, progressPrinter } from './run-task-command.js';

/**
 * The operator the demo acts as: the OS user who ran the command, via `cli demo`. Running `npm start` is that
 * person's explicit action; the enablement is recorded under their name in the ledger (HOST-066, 069).
 */
export function demoOperator(): { id: string; via: 'cli demo' } {
  let id = '';
  try {
    id = userInfo().username;
  } catch {
    id = process.env['USER'] ?? process.env['USERNAME'] ?? '';
  }
  if (!id.trim())
    throw new HostError(
      ErrorCode.HOST_CONFIG_INVALID,
      'cannot name the OS user who runs the demo',
      {},
      {
        remediation: 'run the demo as a named OS user, or enable the connectors with mhs-host endpoints enable',
      },
    );
  return { id, via: 'cli demo' };
}

const BIN = fileURLToPath(new URL('../../bin/mhs-host.js', import.meta.url));

/** The bundled simulators the demo drives: each its own stdio child process, one endpoint each. */
function demoRows(): Array<Omit<ConnectorRow, 'enabled'>> {
  const sim = (family: string, extra: string[] = []) => ({
    connector_id: `mhs-demo-${family}`,
    transport: 'stdio' as const,
    command: [process.execPath, BIN, 'sim', family, '--stdio', '--endpoint-id', `mhs://demo/${family}`, ...extra],
    endpoint_id: null,
    display_name: `demo ${family} simulator`,
    source: { kind: 'registry' as const, ref: 'mhs-host demo' },
    auth: { scheme: 'local' as const },
  });
  return [sim('thermostat', ['--time-scale', '20']), sim('conveyor')];
}

const TASK: TaskSpec = {
  name: 'demo: warm the chamber while the conveyor indexes samples',
  steps: [
    {
      id: 'index-1',
      endpoint: 'mhs://demo/conveyor',
      device: 'conveyor-workcell',
      capability: 'cap.world.step.v1',
      input: { ticks: 3 },
    },
    {
      id: 'warm',
      endpoint: 'mhs://demo/thermostat',
      device: 'thermostat',
      capability: 'cap.thermal.setpoint.v1',
      input: { setpoint_c: 37 },
    },
    {
      id: 'index-2',
      endpoint: 'mhs://demo/conveyor',
      device: 'conveyor-workcell',
      capability: 'cap.world.step.v1',
      input: { ticks: 2 },
    },
    {
      id: 'check',
      endpoint: 'mhs://demo/thermostat',
      device: 'thermostat',
      capability: 'cap.thermal.read.v1',
      input: {},
    },
  ],
};

/**
 * Default package folder: `evidence-<UTC timestamp>` next to a SQLite store (so `./.mhs-host/evidence-…` for the
 * default store), else under `./.mhs-host`.
 */
function defaultOutDir(db: Db, clock: RealClock): string {
  const base = db.dialect === 'sqlite' ? dirname(db.location) : '.mhs-host';
  return join(base, `evidence-${isoAt(clock.now()).replace(/[:.]/g, '-')}`);
}

/**
 * Prints the endpoint evidence the task collected, exports the package (HOST-051, 054) and verifies it offline
 * from its files (HOST-053). Fails with `MHS.EVIDENCE.CHAIN_BROKEN` unless it verifies with every demo
 * endpoint's chain in it.
 */
async function exportAndVerify(
  out: (l: string) => void,
  rt: { db: Db; ledger: DurableLedger; engine: Pick<Engine, 'collectPendingEvidence'> },
  clock: RealClock,
  result: TaskResult,
  outDir: string,
): Promise<void> {
  for (const ev of result.evidence ?? [])
    if (!('error' in ev)) out(`evidence ${ev.endpointId}: the task's ${ev.receipts.length} receipt(s) chained`);
  // Issue 21: each endpoint's bundle is collected once, here at export, not after every task.
  for (const ev of await rt.engine.collectPendingEvidence())
    out(
      'error' in ev
        ? `evidence ${ev.endpointId}: NOT collected (${ev.error.mhs_code})`
        : `evidence ${ev.endpointId}: ${ev.entries} entries, head ${ev.headDigest.slice(0, 16)}… (ledger seq ${ev.seq})`,
    );
  const ex = await exportPackage({ db: rt.db, outDir, clock, ledger: rt.ledger });
  const check = await verifyPackage(ex.dir);
  const expected = [...new Set(TASK.steps.map((s) => s.endpoint))];
  const chains = ex.manifest.endpoints.map((e) => e.endpoint_id);
  const missing = expected.filter((id) => !chains.includes(id));
  out(`evidence package: ${ex.dir}`);
  out(
    `  files ${check.checked.files}, endpoint chains ${chains.length} (${chains.join(', ')}), ledger entries ${check.checked.ledger_entries}, receipts cross-checked ${check.checked.receipts_cross_checked}`,
  );
  const status =
    check.status === 'verified' && ex.status === 'verified' && !missing.length ? 'verified' : 'NOT verified';
  out(`  status: ${status}  (check it again with: mhs-host ledger verify ${ex.dir})`);
  if (status !== 'verified')
    throw new HostError(ErrorCode.EVIDENCE_CHAIN_BROKEN, 'the exported evidence package does not verify', {
      dir: ex.dir,
      export_status: ex.status,
      missing_endpoint_chains: missing,
      ...(check.first ? { first: check.first } : {}),
    });
}

/**
 * `mhs-host demo` (`npm start`): the README's main job. Starts the bundled thermostat and conveyor simulators as
 * stdio children, uses the default SQLite store, says it enables the two demo connectors as the OS user who ran
 * the command and records that operator action (`cli demo`) in the ledger, runs one multi-endpoint task through the governed path, prints every receipt and
 * the ledger verification, then exports the evidence package (host ledger + both endpoints' evidence chains)
 * and verifies it offline; exits 0 when all succeed.
 */
export function demoCommand(): Command {
  return new Command('demo')
    .description('Run the main job: a multi-device task on the bundled simulators with the embedded SQLite store')
    .option('--db <location>', 'store: SQLite file or postgres:// URL (default MHS_HOST_DB or ./.mhs-host/host.db)')
    .option('--out <dir>', 'evidence package folder (default ./.mhs-host/evidence-<timestamp>)')
    .action(async (o: { db?: string; out?: string }) => {
      const out = (l: string) => void process.stdout.write(`${l}\n`);
      const clock = new RealClock();
      // Spans go out over OTLP when OTEL_* says so (docs/observability.md), flushed before the demo returns.
      const otlp = await startOtlpExport();
      // The same runtime and policy gate as `serve` and `invoke` (the demo's steps are R0/R1: no approval needed).
      const rt = await openCliRuntime(o.db ? { db: o.db } : {}, { clock }).catch(shutdownAndThrow(otlp));
      try {
        out(`store: ${rt.db.location} (${rt.db.dialect})`);
        out('MHS integration is experimental and disabled by default (HOST-066).');
        const operator = demoOperator();
        out(
          `enabling the demo connectors as operator "${operator.id}": the OS user who ran this command; ` +
            `running it is your explicit operator action, recorded in the ledger (via "${operator.via}")`,
        );
        for (const row of demoRows()) {
          await rt.connectors.upsertDiscovered(row);
          if (await rt.enablement.isEnabled(row.connector_id)) {
            out(`connector ${row.connector_id}: already enabled by an operator`);
            continue;
          }
          const { entry } = await rt.enablement.enable(row.connector_id, operator);
          out(`connector ${row.connector_id}: enabled by operator "${operator.id}" (ledger seq ${entry?.seq})`);
        }
        for (const row of demoRows()) {
          const ep = await rt.connectEndpoint(row.connector_id);
          const devs = ep.deviceProfiles().map((d) => `${d.device_id} (${d.mode}, ${d.risk_class})`);
          out(`connected ${ep.endpointId} over stdio: ${devs.join(', ')}; ${ep.manifest.safety_notice}`);
        }
        out(`task: ${TASK.name}`);
        const result = await rt.engine.runTask(TASK, {
          onProgress: progressPrinter(out),
          // HOST-003: each device's disclosure, before the task's first call on it.
          disclosure: { surface: 'cli.demo', show: (d) => out(sessionDisclosureText(d)) },
        });
        const taskOk = printTaskSummary(out, result);
        const check = await rt.ledger.verify();
        const head = await rt.ledger.head();
        out(`ledger: ${check.ok ? 'verified' : 'BROKEN'}: ${head.seq + 1} entries, head ${head.digest.slice(0, 16)}…`);
        if (!check.ok) throw new HostError(ErrorCode.EVIDENCE_CHAIN_BROKEN, 'the ledger does not verify', { check });
        if (!taskOk)
          throw new HostError(ErrorCode.HOST_INTERNAL, 'the demo task did not complete', { task: result.taskId });
        await exportAndVerify(out, rt, clock, result, o.out ?? defaultOutDir(rt.db, clock));
        out('demo: ok');
      } finally {
        await rt.close();
        await otlp?.shutdown();
      }
    });
}
