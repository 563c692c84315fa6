import { Command, InvalidArgumentError } from 'commander';
import { RealClock, toHostError } from '../core/index.js';
import { openDb, resolveDbLocation, sqliteBusyMsFromEnv } from '../ledger/index.js';
import { createTokenStore } from '../policy/tokens.js';
import { openHostRuntime } from '../engine/host-runtime.js';
import { DEFAULT_POLICY, loadPolicyFile } from '../policy/index.js';
import { resolveHostId } from '../openwop/causation/host-id.js';
import { startHostServer } from '../server/host-server.js';
import { assertPortFree } from '../server/port-probe.js';
import { TEST_SEAM_ENV_VAR } from '../server/test-seam-routes.js';
import { buildServiceFamilies } from './service-families.js';
import { createHostLog, logBackgroundError } from './host-log.js';
import { modelSpecOf, withModelOptions } from './model-flags.js';
import { runModelLimits } from './node-models.js';
import { installLastResort } from './last-resort.js';
import { startOtlpExport } from './otlp-export.js';
import type { FamilyFlags } from './service-families.js';
import { createGateway, createGatewayHttpHandler, gatewayPollMsFromEnv } from '../gateway/index.js';
import { badFlag, positiveMs } from './cli-runtime.js';
import { runLeaseTimingFromEnv } from '../openwop/run-ownership.js';
import { ENDPOINT_LEASES_ENV, ENDPOINT_SPREAD_ENV } from '../engine/endpoint-ownership.js';

/** `serve`'s SQLite busy timeout unless `MHS_SQLITE_BUSY_MS` says otherwise (ms). */
const SERVE_BUSY_MS = 500;

function port(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('port must be 0-65535');
  return n;
}

/** `--max-run-duration`: whole milliseconds, at least the 1000 the capabilities schema allows (RFC 0058). */
function runCeilingMs(v: string): number {
  const n = positiveMs('--max-run-duration')(v);
  if (n < 1000) throw badFlag('--max-run-duration', 'expected at least 1000 milliseconds', { value: v });
  return n;
}

/**
 * `mhs-host serve [--port N] [--host ADDR] [--db PATH|postgres://...] [--enable-test-seams]`: the OpenWOP REST API, the
 * operator API and the console on one port (default 8787), SQLite by default. Logs one line with
 * the URL. On SIGTERM/SIGINT it stops accepting requests, lets in-flight MHS commands settle (or
 * leaves them to reconciliation on the next start), and exits 0.
 */
export function serveCommand(): Command {
  return withModelOptions(new Command('serve'))
    .description('Serve the OpenWOP REST API, the operator API and the console on one port')
    .option('--port <n>', 'TCP port (0 picks a free one)', port, 8787)
    .option('--host <addr>', 'listen address', '127.0.0.1')
    .option(
      '--db <location>',
      'store: a SQLite file path or a postgres:// URL (default MHS_HOST_DB or ./.mhs-host/host.db)',
    )
    .option('--no-workflows', 'do not register the example workflows in ./workflows')
    .option('--no-mhs', 'serve OpenWOP only (no MHS engine, operator API or MHS nodes)')
    .option('--grace-ms <n>', 'how long shutdown waits for in-flight work', port, 10_000)
    .option('--policy <file>', 'approval policy JSON (default: deny by default, a human approves R2+)')
    .option('--mcp-servers <file>', 'MCP servers JSON for ctx.mcp (RFC 0144; see docs/mcp-client.md)')
    .option(
      '--prompts [dir]',
      'ctx.promptLibrary and the /v1/prompts REST surface: built-in conformance templates, plus the template JSON files in dir',
    )
    .option('--prompt-observability <mode>', 'prompt.composed bodies: hashed (default) or full')
    .option('--ai-script <file>', 'ctx.aiEnvelope over the scripted model playing this agent script')
    .option('--envelopes <file>', 'vendor envelope kinds for ctx.aiEnvelope: JSON {kind: payload JSON Schema}')
    .option('--agent-packs <dir>', 'install the agent packs in dir (RFC 0070 manifestRuntime; also ctx.agentRuntime)')
    .option('--agent-script <file>', 'agent script the manifest agents model plays (default --ai-script, else echo)')
    .option('--host-id <id>', 'stable host id for cross-host causation (default: generated once, kept in the store)')
    .option('--peers <file>', 'peer hosts for mhs.remoteRun: JSON {name: {url, token}} (RFC 0040)')
    .option('--public-url <url>', 'base URL other hosts reach this one at (default the listen URL)')
    .option(
      '--mcp-approval-wait <ms>',
      'MCP gateway (/mcp): longest wait for an approval inside one tool call (default 50000); then it answers pending',
      positiveMs('--mcp-approval-wait'),
    )
    .option(
      '--max-run-duration <ms>',
      'OpenWOP wall-clock ceiling per run (RFC 0058 limits.maxRunDurationMs, at least 1000; default 7 days)',
      runCeilingMs,
    )
    .option('--openwop-v2', 'serve OpenWOP major 2 beside major 1 (the default; docs/openwop.md)')
    .option('--no-openwop-v2', 'serve OpenWOP major 1 alone (OpenWOP-Version 2 is then 406)')
    .option(
      '--enable-test-seams',
      `serve the conformance test seams under /v1/host/sample/* (also ${TEST_SEAM_ENV_VAR}=true); never in production`,
    )
    .action(
      async (
        opts: {
          port: number;
          host: string;
          db?: string;
          workflows: boolean;
          mhs: boolean;
          graceMs: number;
          policy?: string;
          hostId?: string;
          publicUrl?: string;
          enableTestSeams?: boolean;
          openwopV2?: boolean;
          mcpApprovalWait?: number;
          maxRunDuration?: number;
        } & FamilyFlags,
      ) => {
        const clock = new RealClock();
        const modelSpec = modelSpecOf(opts);
        const gatewayPollMs = gatewayPollMsFromEnv();
        // Conformance-only seams answer 404 unless the operator turns them on (host-sample-test-seams.md).
        const testSeams = opts.enableTestSeams === true || process.env[TEST_SEAM_ENV_VAR] === 'true';
        const policy = opts.policy ? loadPolicyFile(opts.policy) : DEFAULT_POLICY;
        // Issue 19: how long this process's run leases last on a shared PostgreSQL store (MHS_RUN_LEASE_*_MS).
        const runLeases = runLeaseTimingFromEnv();
        // Issue 16: a port in use is refused before the store is opened (nothing attached, recovered or resumed).
        await assertPortFree(opts.port, opts.host);
        // Spans (runs, nodes, commands, MCP calls, ledger commits) go out over OTLP when OTEL_* says so.
        const otlp = await startOtlpExport();
        const location = resolveDbLocation({ flag: opts.db });
        // Issue 16: a write waits synchronously for another writer's lock; keep it short so HTTP keeps answering.
        const db = await openDb(location, { sqlite: { busyTimeoutMs: sqliteBusyMsFromEnv() ?? SERVE_BUSY_MS } });
        // RFC 0040: one stable host id per store; its discovery URL is known once the server listens.
        const hostId = await resolveHostId(db, opts.hostId);
        let baseUrl: string | undefined = opts.publicUrl;
        const wellKnownUrl = () => (baseUrl ? new URL('/.well-known/openwop', baseUrl).href : undefined);
        // Failures no request sees (lease renewals, reconnects, late ledger writes, ctx.mcp servers refused as MHS
        // endpoints) go to the log (HOST-093, HOST-020).
        const log = createHostLog();
        installLastResort(log);
        const families = await buildServiceFamilies(
          opts,
          db,
          clock,
          (l) => process.stderr.write(`${l}\n`),
          { hostId, wellKnownUrl },
          { onMcpRefused: logBackgroundError(log) },
        );
        // The one host runtime (the CLI commands use it too): every enabled connector attached now or when enabled.
        const mhs = opts.mhs
          ? await openHostRuntime({
              db,
              clock,
              policy,
              attachEnabled: true,
              onBackgroundError: logBackgroundError(log),
              // Issue 19: one process at a time attaches each endpoint (PostgreSQL; `MHS_ENDPOINT_LEASES=off` opts out).
              ...(process.env[ENDPOINT_LEASES_ENV] !== 'off'
                ? { endpointLeases: { ...runLeases, spread: process.env[ENDPOINT_SPREAD_ENV] !== 'off' } }
                : {}),
            })
          : undefined;
        for (const f of mhs?.failed ?? [])
          process.stderr.write(`connector ${f.connectorId} not attached: ${f.code} ${f.message} (retrying)\n`);
        // The governed MCP gateway at /mcp (agent tokens): the same runtime, so the same governance (issue 14).
        const gateway = mhs
          ? createGateway({
              runtime: mhs,
              pollMs: gatewayPollMs,
              onError: logBackgroundError(log),
              ...(opts.mcpApprovalWait ? { approvalWaitMs: opts.mcpApprovalWait } : {}),
              ...(opts.db ? { dbHint: ` --db ${opts.db}` } : {}),
            })
          : undefined;
        const server = await startHostServer({
          db,
          clock,
          tokens: mhs?.services.tokens ?? createTokenStore(db, clock),
          ...(mhs ? { mhs } : {}),
          port: opts.port,
          host: opts.host,
          workflows: opts.workflows,
          families,
          hostId,
          testSeams,
          runLeases,
          ...(opts.maxRunDuration ? { maxRunDurationMs: opts.maxRunDuration } : {}),
          ...(modelSpec ? { modelLimits: runModelLimits(modelSpec) } : {}),
          ...(opts.openwopV2 === false ? { openwopV2: false } : {}),
          onBackgroundError: logBackgroundError(log),
          ...(gateway
            ? {
                gateway: createGatewayHttpHandler(gateway, mhs!.services.tokens, (e) =>
                  log.warn({ err: e.message }, 'mcp gateway'),
                ),
              }
            : {}),
        }).catch(async (err: unknown) => {
          // Still failed to listen: stop what started, so the process exits 1 (issue 16).
          await gateway?.close();
          await mhs?.close();
          await db.close();
          await otlp?.shutdown();
          throw err;
        });
        baseUrl ??= server.url;
        for (const r of server.host.loaded.refused)
          process.stderr.write(`workflow ${r.file} not registered: ${JSON.stringify(r.errors)}\n`);
        if (testSeams) process.stderr.write('test seams enabled: /v1/host/sample/* is served (conformance only)\n');
        process.stdout.write(`mhs-host serving ${server.url} (store ${db.location})\n`);
        let stopping = false;
        const stop = (signal: string): void => {
          if (stopping) return;
          stopping = true;
          // HTTP first, then the run actors (in-flight MHS commands get the grace period to settle;
          // anything still open is an intent the next start reconciles), then the engine and the store.
          void server
            .close(opts.graceMs)
            .then(() => gateway?.close())
            .then(() => mhs?.close())
            .then(() => db.close())
            .then(() => otlp?.shutdown())
            .then(() => {
              process.stdout.write(`mhs-host stopped (${signal})\n`);
              process.exit(0);
            })
            .catch((err: unknown) => {
              // Issue 16: a failed shutdown is logged and ends the process (1), never left hanging.
              logBackgroundError(log)(toHostError(err));
              process.exit(1);
            });
        };
        process.on('SIGTERM', () => stop('SIGTERM'));
        process.on('SIGINT', () => stop('SIGINT'));
      },
    );
}
