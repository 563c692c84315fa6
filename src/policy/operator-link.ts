import { ErrorCode, HostError } from '../core/index.js';
import type { EndpointConnection } from '../mhs/connection.js';
import type { ConnectorRow } from '../mhs/connector-row.js';
import type { OperatorLink } from './ports.js';

/** What {@link createOperatorLink} needs. */
export interface OperatorLinkDeps {
  /** Connector rows (the connector store's `list`). */
  rows: () => Promise<ConnectorRow[]>;
  /** Opens a connection for a row (src/mhs `connect`, with the live enablement check). */
  connect: (row: ConnectorRow) => Promise<EndpointConnection>;
}

/**
 * The operator route (HOST-047, 090; CORE-130): its own MCP connection per endpoint, separate from
 * the agent's, to a projection that serves `--operator-tools`. Only HTTP endpoints qualify: a stdio
 * projection is a process per connection, so a second process would not share the agent session's
 * permits. Connections are cached and reopened after they close. Refuses with
 * `MHS.HOST.ENDPOINT_UNKNOWN`, `MHS.HOST.ADAPTER_MISSING` (stdio), or the connector's own codes
 * (`MHS.HOST.CONNECTOR_DISABLED` when disabled).
 */
export function createOperatorLink(deps: OperatorLinkDeps): OperatorLink & { close(): Promise<void> } {
  const open = new Map<string, Promise<EndpointConnection>>();
  return {
    operatorConnection(endpointId) {
      const cached = open.get(endpointId);
      if (cached) return cached;
      const p = (async () => {
        const row = (await deps.rows()).find((r) => r.endpoint_id === endpointId);
        if (!row)
          throw new HostError(ErrorCode.HOST_ENDPOINT_UNKNOWN, 'no connector for this endpoint', {
            endpoint_id: endpointId,
          });
        if (row.transport !== 'http') {
          throw new HostError(ErrorCode.HOST_ADAPTER_MISSING, 'the operator route needs an HTTP projection', {
            endpoint_id: endpointId,
            connector_id: row.connector_id,
          });
        }
        const conn = await deps.connect(row);
        void conn.closed.then(() => open.delete(endpointId));
        return conn;
      })();
      open.set(endpointId, p);
      p.catch(() => open.delete(endpointId));
      return p;
    },
    async close() {
      const all = [...open.values()];
      open.clear();
      await Promise.all(all.map((p) => p.then((c) => c.close()).catch(() => undefined)));
    },
  };
}
