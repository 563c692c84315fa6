import type { ConnectorRow } from '../mhs/connector-row.js';
import type { Manifest } from '../mhs/wire-types.js';
import type { EndpointDirectory, EndpointSummary } from './ports.js';

/** Inputs of {@link createConnectorDirectory}. */
export interface ConnectorDirectoryDeps {
  /** Connector rows (the connector store's `list`). */
  rows: () => Promise<ConnectorRow[]>;
  /** The admitted manifest of a row when the host has one (engine connection or manifest cache). */
  manifestFor: (row: ConnectorRow) => Manifest | undefined | Promise<Manifest | undefined>;
}

/**
 * The operator console's view of endpoints, from the host's own records: connector rows (enabled
 * flag, transport, source) and admitted manifests (devices). A disabled connector is listed with
 * its devices only when a manifest is already cached; nothing is connected to list it (HOST-068).
 */
export function createConnectorDirectory(deps: ConnectorDirectoryDeps): EndpointDirectory {
  async function list(): Promise<EndpointSummary[]> {
    const out: EndpointSummary[] = [];
    for (const row of await deps.rows()) {
      const m = row.endpoint_id ? await deps.manifestFor(row) : undefined;
      out.push({
        endpoint_id: row.endpoint_id ?? `(unknown: ${row.connector_id})`,
        connector_id: row.connector_id,
        display_name: m?.display_name ?? row.display_name ?? row.descriptor?.display_name ?? row.connector_id,
        enabled: row.enabled,
        experimental: true,
        transport: row.transport,
        conformance: (m?.conformance ?? row.descriptor?.conformance)?.level ?? null,
        trust: (m?.conformance ?? row.descriptor?.conformance)?.trust ?? null,
        devices: m?.devices ?? [],
      });
    }
    return out;
  }
  return {
    list,
    async device(endpointId, deviceId) {
      const e = (await list()).find((x) => x.endpoint_id === endpointId);
      return e?.devices.find((d) => d.device_id === deviceId);
    },
  };
}
