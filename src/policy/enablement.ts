/**
 * Operator enablement of MHS connectors (HOST-066..069). The connector row's `enabled` flag is the
 * one switch every MHS surface reads (connector, engine, tool projection, console): enabling or
 * disabling updates it, is recorded in the ledger with the operator's identity, and is announced to
 * every subscribed surface at once. Nothing else enables a connector: not discovery, not an
 * upgrade, not a first start.
 */
import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { Ledger, LedgerEntry } from '../ledger/ledger-types.js';
import type { ConnectorRow } from '../mhs/connector-row.js';
import type { ConnectorStore } from './connector-store.js';

/** The human who acted. */
export interface OperatorIdentity {
  /** Stable operator id or name; required, never empty. */
  id: string;
  /** Where the action came from, e.g. `cli`, `console`, `api`. */
  via?: string;
}

/** What every surface is told when a connector's enablement changes. */
export interface EnablementChange {
  connector_id: string;
  enabled: boolean;
  operator: OperatorIdentity;
  row: ConnectorRow;
}

/** Result of an operator action. */
export interface EnablementResult {
  row: ConnectorRow;
  /** The ledger entry recording it; null only for a disable whose record could not be written. */
  entry: LedgerEntry | null;
}

/** The enablement service. */
export interface Enablement {
  /**
   * Enables a connector: records `operator.enable` in the ledger first, then sets the flag. Fails
   * closed: when the ledger cannot be written nothing changes (`MHS.HOST.LEDGER_UNAVAILABLE`).
   * @throws HostError `MHS.HOST.ENDPOINT_UNKNOWN`, `MHS.HOST.CONFIG_INVALID` (no operator identity).
   */
  enable(connectorId: string, operator: OperatorIdentity): Promise<EnablementResult>;
  /**
   * Disables a connector: clears the flag first (safe side), then records `operator.disable`. A
   * disable is never refused because the ledger is down; `entry` is then null.
   */
  disable(connectorId: string, operator: OperatorIdentity): Promise<EnablementResult>;
  /** The live flag (false for unknown connectors). Pass it as `connect(row, {isEnabled})`. */
  isEnabled(connectorId: string): Promise<boolean>;
  /** Subscribes a surface; returns the unsubscribe function. */
  onChange(listener: (change: EnablementChange) => void): () => void;
  /** Status for settings/status surfaces (HOST-067): the feature is experimental. */
  status(): Promise<{ experimental: true; connectors: Array<{ connector_id: string; enabled: boolean }> }>;
}

/** The surfaces an enablement action applies to together (HOST-069), written into the ledger entry. */
export const MHS_SURFACES = ['mcp-connector', 'engine', 'model-tools', 'console', 'api'] as const;

function checkOperator(op: OperatorIdentity): void {
  if (!op || typeof op.id !== 'string' || !op.id.trim())
    throw new HostError(
      ErrorCode.HOST_CONFIG_INVALID,
      'an operator identity is required to enable or disable',
      {},
      {
        remediation: 'Pass --operator NAME (CLI) or sign in (console).',
      },
    );
}

/** Creates the enablement service over the connector store and the host ledger. */
export function createEnablement(deps: { store: ConnectorStore; ledger: Ledger }): Enablement {
  const listeners = new Set<(c: EnablementChange) => void>();
  const announce = (c: EnablementChange) => {
    for (const l of listeners) {
      try {
        l(c);
      } catch {
        // A failing surface must not stop the others from hearing about the change.
      }
    }
  };
  const entryFor = (kind: 'operator.enable' | 'operator.disable', row: ConnectorRow, op: OperatorIdentity) => ({
    kind,
    connector_id: row.connector_id,
    ...(row.endpoint_id ? { endpoint_id: row.endpoint_id } : {}),
    operator: { id: op.id.trim(), via: op.via ?? 'unknown' },
    surfaces: [...MHS_SURFACES],
    experimental: true,
  });

  return {
    async enable(connectorId, operator) {
      checkOperator(operator);
      const before = await deps.store.require(connectorId);
      let entry: LedgerEntry;
      try {
        entry = await deps.ledger.append(entryFor('operator.enable', before, operator));
      } catch (err) {
        throw toHostError(err, ErrorCode.HOST_LEDGER_UNAVAILABLE);
      }
      const row = await deps.store._setEnabled(connectorId, true);
      announce({ connector_id: connectorId, enabled: true, operator, row });
      return { row, entry };
    },
    async disable(connectorId, operator) {
      checkOperator(operator);
      const row = await deps.store._setEnabled(connectorId, false);
      announce({ connector_id: connectorId, enabled: false, operator, row });
      let entry: LedgerEntry | null = null;
      try {
        entry = await deps.ledger.append(entryFor('operator.disable', row, operator));
      } catch {
        entry = null;
      }
      return { row, entry };
    },
    async isEnabled(connectorId) {
      return (await deps.store.get(connectorId))?.enabled === true;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async status() {
      const rows = await deps.store.list();
      return {
        experimental: true,
        connectors: rows.map((r) => ({ connector_id: r.connector_id, enabled: r.enabled })),
      };
    },
  };
}

/**
 * Closes an open connection as soon as its connector is disabled (HOST-068: no tool stays reachable).
 * Returns the unsubscribe function; call it when the connection is closed for another reason.
 */
export function closeWhenDisabled(
  enablement: Pick<Enablement, 'onChange'>,
  connectorId: string,
  conn: { close(): Promise<void> },
): () => void {
  return enablement.onChange((c) => {
    if (c.connector_id === connectorId && !c.enabled) void conn.close().catch(() => undefined);
  });
}
