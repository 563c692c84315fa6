import { Command } from 'commander';
import { RealClock, createIdFactory } from '../core/index.js';
import { openHostRuntime } from '../engine/host-runtime.js';
import { createGateway, gatewayPollMsFromEnv, serveGatewayStdio } from '../gateway/index.js';
import { DEFAULT_APPROVAL_WAIT_MS } from '../gateway/index.js';
import { DEFAULT_POLICY, loadPolicyFile } from '../policy/index.js';
import { positiveMs } from './cli-runtime.js';
import { createHostLog, logBackgroundError } from './host-log.js';
import { installLastResort } from './last-resort.js';

/**
 * `mhs-host mcp`: the governed MCP gateway on stdio, the command an MCP harness launches (docs/mcp-gateway.md).
 * Stdout carries MCP only; logs go to stderr as JSON lines. Every enabled connector is attached, and connectors
 * enabled or disabled later (by any process on the store) appear or vanish with `tools/list_changed`.
 */
export function mcpCommand(): Command {
  return new Command('mcp')
    .description('Serve the governed MCP gateway on stdio (for Claude Desktop, Claude Code, Cursor, any MCP client)')
    .option('--db <location>', 'store: SQLite file or postgres:// URL (default MHS_HOST_DB or ./.mhs-host/host.db)')
    .option('--policy <file>', 'approval policy JSON (default: deny by default, a human approves R2+)')
    .option(
      '--approval-wait <ms>',
      `longest wait for an operator's approval inside one tool call (default ${DEFAULT_APPROVAL_WAIT_MS} ms); then the call answers pending and the approval stays open`,
      positiveMs('--approval-wait'),
    )
    .option(
      '--enable-composition',
      'experimental (HOST-084): list mhs__composition__<device> tools for endpoints that advertise mhs.composition.run',
    )
    .action(async (o: { db?: string; policy?: string; approvalWait?: number; enableComposition?: boolean }) => {
      const pollMs = gatewayPollMsFromEnv();
      const policy = o.policy ? loadPolicyFile(o.policy) : DEFAULT_POLICY;
      const clock = new RealClock();
      const log = createHostLog();
      installLastResort(log); // stdout carries MCP only: the last resort logs to stderr too (issue 16)
      const onError = logBackgroundError(log);
      const rt = await openHostRuntime({
        clock,
        policy,
        attachEnabled: true,
        onBackgroundError: onError,
        ...(o.db ? { db: o.db } : {}),
        ...(o.enableComposition ? { engine: { experimentalComposition: true } } : {}),
      });
      for (const f of rt.failed) log.warn({ connector_id: f.connectorId, code: f.code }, f.message);
      const gw = createGateway({
        runtime: rt,
        pollMs,
        onError,
        ...(o.approvalWait ? { approvalWaitMs: o.approvalWait } : {}),
        ...(o.db ? { dbHint: ` --db ${o.db}` } : {}),
      });
      let closing: Promise<void> | undefined;
      const shutdown = (): Promise<void> =>
        (closing ??= (async () => {
          await gw.close();
          await rt.close();
          log.info('mhs-host mcp stopped');
        })());
      serveGatewayStdio(gw, {
        ids: createIdFactory(clock),
        onClose: () => void shutdown().finally(() => process.exit(0)),
        onError: (e) => log.warn({ err: e.message }, 'mcp stdio'),
      });
      for (const sig of ['SIGTERM', 'SIGINT'] as const)
        process.once(sig, () => void shutdown().finally(() => process.exit(0)));
      log.info({ store: rt.db.location, attached: rt.attached }, 'mhs-host mcp serving on stdio');
    });
}
