import { ErrorCode, HostError, RealClock } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { openDb, openLedger, resolveDbLocation } from '../ledger/index.js';
import type { Db, DurableLedger } from '../ledger/index.js';
import { openArtifacts } from '../ledger/artifacts.js';
import type { Artifacts } from '../ledger/artifacts.js';
import { connect } from '../mhs/connector.js';
import type { ConnectOptions } from '../mhs/connector.js';
import { openConnectorStore } from '../policy/connector-store.js';
import type { ConnectorStore } from '../policy/connector-store.js';
import { createEnablement } from '../policy/enablement.js';
import type { Enablement } from '../policy/enablement.js';
import { createEngine } from './engine.js';
import type { Engine, EngineOptions } from './engine.js';
import type { EndpointActor } from './endpoint-actor.js';

/** The store, ledger, connector rows, enablement and engine of one host process (CLI commands, demo). */
export interface HostRuntime {
  db: Db;
  ledger: DurableLedger;
  artifacts: Artifacts;
  connectors: ConnectorStore;
  enablement: Enablement;
  engine: Engine;
  /**
   * Connects the connector `ref` (connector id or endpoint id) and attaches it to the engine. Refuses a
   * disabled connector with `MHS.HOST.CONNECTOR_DISABLED` before any process or socket opens (HOST-068), an
   * unknown one with `MHS.HOST.ENDPOINT_UNKNOWN`.
   */
  connectEndpoint(ref: string, opts?: Pick<ConnectOptions, 'stderr' | 'cwd'>): Promise<EndpointActor>;
  close(): Promise<void>;
}

/** Opens the host runtime on the store at `--db` / `MHS_HOST_DB` / `./.mhs-host/host.db`. */
export async function openHostRuntime(
  opts: { db?: string; clock?: Clock; engine?: Partial<Omit<EngineOptions, 'ledger' | 'clock'>> } = {},
): Promise<HostRuntime> {
  const clock = opts.clock ?? new RealClock();
  const db = await openDb(resolveDbLocation({ flag: opts.db }));
  try {
    const ledger = await openLedger(db, { clock });
    const artifacts = await openArtifacts(db, { clock });
    const connectors = await openConnectorStore(db, { clock });
    const enablement = createEnablement({ store: connectors, ledger });
    // Enablement is read on every call from a live set, updated by the operator actions (HOST-068, 069).
    const enabled = new Set<string>();
    enablement.onChange((c) => (c.enabled ? enabled.add(c.connector_id) : enabled.delete(c.connector_id)));
    const engine = createEngine({ ledger, clock, artifacts, isEnabled: (id) => enabled.has(id), ...opts.engine });
    await engine.start();
    const rt: HostRuntime = {
      db,
      ledger,
      artifacts,
      connectors,
      enablement,
      engine,
      async connectEndpoint(ref, copts = {}) {
        const rows = await connectors.list();
        const row = rows.find((r) => r.connector_id === ref || r.endpoint_id === ref);
        if (!row)
          throw new HostError(
            ErrorCode.HOST_ENDPOINT_UNKNOWN,
            `no connector ${ref}`,
            { ref, known: rows.map((r) => r.connector_id) },
            { remediation: 'Run `mhs-host endpoints list` to see connector ids.' },
          );
        const conn = await connect(row, {
          clock,
          descriptor: row.descriptor ?? null,
          isEnabled: (id) => enablement.isEnabled(id),
          stderr: copts.stderr ?? 'ignore',
          ...(copts.cwd ? { cwd: copts.cwd } : {}),
        });
        enabled.add(row.connector_id);
        await connectors.recordManifest(row.connector_id, conn.manifest.endpoint_id, conn.manifest.manifest_digest);
        return engine.attach(conn);
      },
      async close() {
        await engine.stop();
        await db.close();
      },
    };
    return rt;
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
}
