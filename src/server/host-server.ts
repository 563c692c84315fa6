import type { FastifyInstance } from 'fastify';
import type { Clock, HostError } from '../core/index.js';
import type { HostRuntime } from '../engine/host-runtime.js';
import type { Db } from '../ledger/index.js';
import { createOpenwopHost } from '../openwop/host.js';
import type { OpenwopHost } from '../openwop/host.js';
import type { RunLeaseTiming } from '../openwop/run-ownership.js';
import type { RunModelLimits } from '../openwop/run-options.js';
import type { NodeModule } from '../openwop/node-registry.js';
import { mockProviderFamily } from '../openwop/services/mock-provider-family.js';
import { conformanceEffectFamily } from '../openwop/nodes/conformance-effect-node.js';
import { conformanceMcpInvokeFamily } from '../openwop/nodes/conformance-mcp-invoke-node.js';
import type { McpFamily } from '../openwop/services/mcp-family.js';
import type { ServiceFamily } from '../openwop/service-family.js';
import { mhsNodes } from '../openwop/nodes/mhs-nodes.js';
import { ensureMhsEffectIndex } from '../openwop/effects/mhs-effect-index.js';
import { buildApp } from './app.js';
import { workflowRecorder } from './workflow-record.js';
import { isAddressInUse, portInUse } from './port-probe.js';
import type { MountReport } from './app.js';
import type { ServedRoute } from './v2/route-table.js';
import type { BearerVerifier } from './auth.js';
import type { GatewayHttpHandler } from '../gateway/gateway-http.js';

/** Options of {@link startHostServer}. */
export interface HostServerOptions {
  db: Db;
  clock: Clock;
  tokens: BearerVerifier;
  port: number;
  host?: string;
  /** Register the example workflows from ./workflows (default true). */
  workflows?: boolean;
  /** Extra node types (the MHS nodes) and the capability families they add. */
  nodes?: readonly NodeModule[];
  capabilities?: Record<string, unknown>;
  /** Host service families (RFC 0144) installed into the OpenWOP host. */
  families?: readonly ServiceFamily[];
  /** Dependencies for the operator API and console modules, when those are present. */
  operator?: Record<string, unknown>;
  /** The host runtime (engine, ledger, policy services): registers `mhs.invoke` / `mhs.task` and the operator API. */
  mhs?: HostRuntime;
  sseKeepAliveMs?: number;
  /** This host's stable id (RFC 0040), see `resolveHostId`. */
  hostId?: string;
  /** Serve the conformance test seams under `/v1/host/sample/*` (default false: 404), see `AppDeps.testSeams`. */
  testSeams?: boolean;
  /** Serve OpenWOP major 2 beside major 1 (default true), see `OpenwopV2Deps.openwopV2`. */
  openwopV2?: boolean;
  /** The MCP gateway's HTTP handler, served at `/mcp`; closed with the server. */
  gateway?: GatewayHttpHandler;
  /** Where failures no request sees go (run actors waiting out a store outage; HOST-093). `serve` logs them. */
  onBackgroundError?: (err: HostError) => void;
  /** Lease timing of this process's runs on a shared PostgreSQL store (issue 19), see `RunLeaseTiming`. */
  runLeases?: RunLeaseTiming;
  /** Wall-clock ceiling per run in ms (RFC 0058 `limits.maxRunDurationMs`; default `DEFAULT_MAX_RUN_DURATION_MS`). */
  maxRunDurationMs?: number;
  /** What the host's model calls accept (from `--model`), see `OpenwopHostOptions.modelLimits`. */
  modelLimits?: RunModelLimits;
}

/** A listening host: the OpenWOP host, its app and URL. */
export interface HostServer {
  url: string;
  app: FastifyInstance;
  host: OpenwopHost;
  mounted: MountReport;
  /** Every route the app serves, as the router holds it (`buildApp`'s table; the v2 OpenAPI document is built from it). */
  routes: readonly ServedRoute[];
  /** Stops accepting requests, then halts the run actors (in-flight MHS work gets `graceMs`). */
  close(graceMs?: number): Promise<void>;
}

/** The MCP invoke fixture where the `mcp` family is installed (host-sample-test-seams.md §23 is gated on it). */
function mcpInvokeFamilies(families: readonly ServiceFamily[] | undefined): ServiceFamily[] {
  const mcp = families?.find((f) => f.name === 'mcp') as McpFamily | undefined;
  return mcp ? [conformanceMcpInvokeFamily(mcp)] : [];
}

function isLoopback(addr: string): boolean {
  return addr === '127.0.0.1' || addr === '::1' || addr === 'localhost';
}

/**
 * Builds the OpenWOP host over `db` (resuming unfinished runs) and listens on one port. A port another process
 * holds raises `MHS.HOST.PORT_IN_USE` after the resumed runs are halted again (they resume on the next start).
 */
export async function startHostServer(o: HostServerOptions): Promise<HostServer> {
  const nodes = [
    ...(o.nodes ?? []),
    ...(o.mhs
      ? mhsNodes({
          engine: o.mhs.engine,
          ledger: o.mhs.ledger,
          approvals: { events: o.mhs.services.events, gate: o.mhs.services.gate },
        })
      : []),
  ];
  // The mock provider extension is for test keys, and the test seams are this host's only test mode (run-options.md).
  const families = [
    ...(o.families ?? []),
    ...(o.testSeams ? [mockProviderFamily(), conformanceEffectFamily(), ...mcpInvokeFamilies(o.families)] : []),
  ];
  // Issue 17: the run-id index of governed commands (a trigger on the host ledger, filled once from its intents).
  if (o.mhs) await ensureMhsEffectIndex(o.db);
  const host = await createOpenwopHost({
    db: o.db,
    clock: o.clock,
    nodes,
    // v2 persistence.md: a host serving major 2 stamps era 3 on every run it creates, by either major.
    ...(o.openwopV2 === false ? {} : { newRunEra: 3 as const }),
    ...(o.capabilities ? { capabilities: o.capabilities } : {}),
    families,
    ...(o.workflows === false ? { workflowsDir: false as const } : {}),
    ...(o.hostId ? { hostId: o.hostId } : {}),
    ...(o.onBackgroundError ? { onBackgroundError: o.onBackgroundError } : {}),
    ...(o.runLeases ? { runLeases: o.runLeases } : {}),
    ...(o.maxRunDurationMs ? { limits: { maxRunDurationMs: o.maxRunDurationMs } } : {}),
    ...(o.modelLimits ? { modelLimits: o.modelLimits } : {}),
    // HOST-093: a run-store write refused as unavailable makes the ledger probe the store, so its status (operator
    // API, console, new commands refused) shows the outage until a probe succeeds.
    onStoreOutage: () => void o.mhs?.ledger.probe().catch(() => undefined),
    // Issue 20: a registration or replacement by a principal is a host ledger entry, committed with the version.
    ...(o.mhs ? { recordWorkflow: workflowRecorder(o.mhs.ledger) } : {}),
  });
  const { app, mounted, routes } = await buildApp({
    host,
    auth: o.tokens,
    clock: o.clock,
    families,
    operator: {
      db: o.db,
      clock: o.clock,
      tokens: o.tokens,
      runs: host.runs,
      host,
      ...o.mhs?.operatorDeps(),
      ...o.operator,
    },
    ...(o.sseKeepAliveMs !== undefined ? { sseKeepAliveMs: o.sseKeepAliveMs } : {}),
    ...(o.testSeams ? { testSeams: true } : {}),
    ...(o.openwopV2 === false ? { openwopV2: false } : {}),
    ...(o.mhs ? { ledger: o.mhs.ledger } : {}),
    ...(o.gateway ? { mcp: { handler: o.gateway, loopback: isLoopback(o.host ?? '127.0.0.1') } } : {}),
  });
  try {
    await app.listen({ port: o.port, host: o.host ?? '127.0.0.1' });
  } catch (err) {
    // Taken since serve checked it (issue 16): halt the runs just resumed, so the caller can stop and exit 1.
    await Promise.all([app.close(), host.close(0)]).catch(() => undefined);
    throw isAddressInUse(err) ? portInUse(o.port, o.host ?? '127.0.0.1', err) : err;
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : o.port;
  const shownHost = (o.host ?? '127.0.0.1') === '0.0.0.0' ? '127.0.0.1' : (o.host ?? '127.0.0.1');
  return {
    url: `http://${shownHost}:${port}`,
    app,
    host,
    mounted,
    routes,
    async close(graceMs = 10_000) {
      // Open SSE streams would keep close() waiting: end them first.
      app.server.closeAllConnections?.();
      await o.gateway?.close();
      await Promise.all([app.close(), host.close(graceMs)]);
    },
  };
}
