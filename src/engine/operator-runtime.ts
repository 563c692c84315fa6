import type { Clock, HostError } from '../core/index.js';
import { labelLedger, openLedger } from '../ledger/index.js';
import type { Db, DurableLedger } from '../ledger/index.js';
import { openArtifacts } from '../ledger/artifacts.js';
import type { Artifacts } from '../ledger/artifacts.js';
import { connect } from '../mhs/connector.js';
import type { Manifest } from '../mhs/wire-types.js';
import { openConnectorStore } from '../policy/connector-store.js';
import type { ConnectorStore } from '../policy/connector-store.js';
import { createEnablement } from '../policy/enablement.js';
import type { Enablement } from '../policy/enablement.js';
import {
  DEFAULT_POLICY,
  approvalPollMsFromEnv,
  createConnectorDirectory,
  createOperatorEvents,
  createOperatorLink,
  createOperatorServices,
  announceLedgerStatus,
  observeLedger,
} from '../policy/index.js';
import type { EndpointDirectory, OperatorServices, PolicyConfig } from '../policy/index.js';

/** A policy source: a fixed config, or a function read on every decision (null/throw → refuse, HOST-043). */
export type PolicySource = PolicyConfig | (() => PolicyConfig | null | Promise<PolicyConfig | null>);

/**
 * The policy side of one host process over one store, without an engine: the ledger (every append
 * announced on the operator event stream), connector rows, enablement, the endpoint directory, the
 * operator route and the operator services (policy gate with approvals, permits, e-stop, tokens).
 * The HTTP operator API, the console, `mhs-host approvals` and the engine's policy step all use it.
 */
export interface OperatorRuntime {
  db: Db;
  clock: Clock;
  ledger: DurableLedger;
  artifacts: Artifacts;
  connectors: ConnectorStore;
  enablement: Enablement;
  directory: EndpointDirectory;
  services: OperatorServices;
  /** How often a waiting approval is re-read from the store (`MHS_APPROVAL_POLL_MS`). */
  approvalPollMs: number;
  /** Admitted manifests of the endpoints this process connected, by connector id (for the directory). */
  manifests: Map<string, Manifest>;
  /** Dependencies for `registerOperatorRoutes` / `registerConsole`. */
  operatorDeps(): Record<string, unknown>;
  /** Closes the operator route connections (not the store). */
  close(): Promise<void>;
}

/**
 * Opens the {@link OperatorRuntime} on `db`. It starts no engine and runs no recovery, so it is safe
 * to open next to a running host on the same store (e.g. to decide approvals from the CLI).
 */
export async function openOperatorRuntime(
  db: Db,
  clock: Clock,
  policy: PolicySource = DEFAULT_POLICY,
  opts: {
    ledgerLabel?: Readonly<Record<string, unknown>>;
    /** Where a lease renewal the store refused is reported (HOST-093; see `LedgerOptions.onLeaseError`). */
    onLeaseError?: (err: HostError) => void;
    /** Where `MHS_APPROVAL_POLL_MS` is read (default `process.env`); a malformed value raises `MHS.HOST.CONFIG_INVALID`. */
    env?: Record<string, string | undefined>;
  } = {},
): Promise<OperatorRuntime> {
  const approvalPollMs = approvalPollMsFromEnv(opts.env);
  const events = createOperatorEvents();
  const opened = await openLedger(db, { clock, ...(opts.onLeaseError ? { onLeaseError: opts.onLeaseError } : {}) });
  // A replay run's entries all carry its label (HOST-085); every committed entry is announced on the SSE stream.
  const ledger = observeLedger(opts.ledgerLabel ? labelLedger(opened, opts.ledgerLabel) : opened, events);
  announceLedgerStatus(opened, events);
  const connectors = await openConnectorStore(db, { clock });
  const enablement = createEnablement({ store: connectors, ledger });
  const manifests = new Map<string, Manifest>();
  const isEnabled = (id: string) => enablement.isEnabled(id);
  const link = createOperatorLink({
    clock,
    rows: () => connectors.list(),
    connect: (row) => connect(row, { clock, descriptor: row.descriptor ?? null, isEnabled, stderr: 'ignore' }),
  });
  // Manifests and endpoint evidence bundles go to the store the export reads (HOST-051, 054).
  const artifacts = await openArtifacts(db, { clock });
  // The manifest this process admitted, else the one last admitted for the row (a CLI operator action connects nothing).
  const storedManifest = async (connectorId: string): Promise<Manifest | undefined> => {
    const digest = await connectors.manifestDigest(connectorId);
    return digest ? ((await artifacts.getManifest(digest)) as Manifest | undefined) : undefined;
  };
  const directory = createConnectorDirectory({
    rows: () => connectors.list(),
    manifestFor: async (row) => manifests.get(row.connector_id) ?? (await storedManifest(row.connector_id)),
  });
  const services = createOperatorServices({
    db,
    ledger,
    clock,
    link,
    enablement,
    directory,
    policy,
    events,
    approvalPollMs,
  });
  return {
    db,
    clock,
    ledger,
    artifacts,
    connectors,
    enablement,
    directory,
    services,
    approvalPollMs,
    manifests,
    operatorDeps: () => ({ ...services, ledger, directory, enablement, clock, link, policy }),
    close: () => link.close().catch(() => undefined),
  };
}
