import type { Clock } from '../core/index.js';
import { createEngine } from '../engine/index.js';
import type { Engine } from '../engine/index.js';
import { openLedger } from '../ledger/index.js';
import { openArtifacts } from '../ledger/artifacts.js';
import type { Db, DurableLedger } from '../ledger/index.js';
import { connect } from '../mhs/connector.js';
import type { Manifest } from '../mhs/index.js';
import { openConnectorStore } from '../policy/connector-store.js';
import type { ConnectorStore } from '../policy/connector-store.js';
import { createEnablement } from '../policy/enablement.js';
import type { Enablement } from '../policy/enablement.js';
import {
  DEFAULT_POLICY,
  createConnectorDirectory,
  createOperatorLink,
  createOperatorServices,
  createOperatorEvents,
  observeLedger,
  guardPermits,
} from '../policy/index.js';
import type { EndpointDirectory, OperatorServices, PolicyConfig } from '../policy/index.js';

/** The MHS side of one host process: ledger, connectors, enablement, policy services and the engine. */
export interface MhsRuntime {
  ledger: DurableLedger;
  connectors: ConnectorStore;
  enablement: Enablement;
  directory: EndpointDirectory;
  services: OperatorServices;
  engine: Engine;
  /** Endpoint ids attached to the engine, and connectors that failed to connect (with the reason). */
  attached: string[];
  failed: Array<{ connectorId: string; code: string; message: string }>;
  /** Dependencies for `registerOperatorRoutes` / `registerConsole`. */
  operatorDeps(): Record<string, unknown>;
  close(): Promise<void>;
}

/**
 * Opens the MHS runtime on `db`: the ledger, connector rows and enablement, the operator link and
 * policy services (approvals, permits, e-stop), and the engine with the policy gate as its call
 * gate. Recovery runs first (every intent without an outcome becomes unknown), then every enabled
 * connector is connected and attached (its unsettled commands reconciled before new ones), and a
 * connector enabled later by an operator is attached then. A connector that cannot be reached is
 * reported in `failed` and does not stop the host.
 */
export async function openMhsRuntime(db: Db, clock: Clock, policy: PolicyConfig = DEFAULT_POLICY): Promise<MhsRuntime> {
  const events = createOperatorEvents();
  // Every committed entry is announced to the console's SSE stream as it is recorded.
  const ledger = observeLedger(await openLedger(db, { clock }), events);
  const connectors = await openConnectorStore(db, { clock });
  const enablement = createEnablement({ store: connectors, ledger });
  const manifests = new Map<string, Manifest>();
  const isEnabled = (id: string) => enablement.isEnabled(id);
  const link = createOperatorLink({
    rows: () => connectors.list(),
    connect: (row) => connect(row, { isEnabled, stderr: 'ignore' }),
  });
  const directory = createConnectorDirectory({
    rows: () => connectors.list(),
    manifestFor: (row) => manifests.get(row.connector_id),
  });
  const services = createOperatorServices({ db, ledger, clock, link, enablement, directory, policy, events });
  // Manifests and endpoint evidence bundles go to the store the export reads (HOST-051, 054).
  const artifacts = await openArtifacts(db, { clock });
  const engine = createEngine({ ledger, clock, gate: services.gate, isEnabled, artifacts });
  await engine.start();
  const attached: string[] = [];
  const failed: MhsRuntime['failed'] = [];
  const conns: Array<{ close(): Promise<void> }> = [];

  const attach = async (connectorId: string): Promise<void> => {
    const row = (await connectors.list()).find((r) => r.connector_id === connectorId);
    if (!row) return;
    try {
      const conn = await connect(row, { clock, descriptor: row.descriptor ?? null, isEnabled, stderr: 'ignore' });
      conns.push(conn);
      manifests.set(row.connector_id, conn.manifest);
      await connectors.recordManifest(row.connector_id, conn.manifest.endpoint_id, conn.manifest.manifest_digest);
      const ep = await engine.attach(guardPermits(conn, (id) => services.gate.claimPermit(id)));
      attached.push(ep.endpointId);
    } catch (err) {
      const e = err as { code?: string; message?: string };
      failed.push({ connectorId, code: e.code ?? 'error', message: e.message ?? String(err) });
    }
  };

  for (const row of await connectors.list())
    if (await enablement.isEnabled(row.connector_id)) await attach(row.connector_id);
  const off = enablement.onChange((c) => {
    if (c.enabled) void attach(c.connector_id);
  });

  return {
    ledger,
    connectors,
    enablement,
    directory,
    services,
    engine,
    attached,
    failed,
    operatorDeps: () => ({ ...services, ledger, directory, enablement, clock }),
    async close() {
      off();
      await engine.stop().catch(() => undefined);
      for (const c of conns) await c.close().catch(() => undefined);
      await (link as { close?: () => Promise<void> }).close?.().catch(() => undefined);
    },
  };
}
