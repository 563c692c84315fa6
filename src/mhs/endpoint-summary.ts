/**
 * One-line summary of a connector row for tables (CLI `endpoints list`, status surfaces): source,
 * transport, enabled, trust, claim, devices, mode, risk. Pure; uses the admitted manifest when one
 * is known and the descriptor otherwise. "no claim" only when a claim is known to be absent
 * (HOST-014); `?` when nothing was fetched yet.
 */
import { describeAuth } from './connector-row.js';
import type { ConnectorRow } from './connector-row.js';
import { NO_CLAIM } from './presentation.js';
import { sourceLabel } from './discovery.js';
import { RISK_CLASSES } from './wire-schemas.js';
import type { ConformanceClaim, Manifest } from './wire-types.js';

export interface EndpointSummary {
  connector_id: string;
  endpoint_id: string;
  source: string;
  transport: string;
  enabled: boolean;
  auth: string;
  trust: string;
  claim: string;
  devices: string;
  mode: string;
  risk: string;
}

const UNKNOWN = '?';

/** Summarises a row and, when known, its admitted manifest. */
export function summarizeEndpoint(row: ConnectorRow, manifest?: Manifest): EndpointSummary {
  let claim: ConformanceClaim | null | undefined;
  if (manifest) claim = manifest.conformance;
  else if (row.descriptor) claim = row.descriptor.conformance;
  const devices = manifest?.devices ?? [];
  const risk = devices.reduce((max, d) => Math.max(max, RISK_CLASSES.indexOf(d.risk_class)), -1);
  return {
    connector_id: row.connector_id,
    endpoint_id: manifest?.endpoint_id ?? row.endpoint_id ?? UNKNOWN,
    source: sourceLabel(row.source),
    transport: row.transport,
    enabled: row.enabled,
    auth: describeAuth(row.transport === 'stdio' ? { scheme: 'local' } : row.auth),
    trust: claim === undefined ? UNKNOWN : claim ? claim.trust : NO_CLAIM,
    claim: claim === undefined ? UNKNOWN : claim ? claim.level : NO_CLAIM,
    devices: manifest ? devices.map((d) => d.device_id).join(',') || '-' : UNKNOWN,
    mode: manifest ? [...new Set(devices.map((d) => d.mode))].join(',') || '-' : UNKNOWN,
    risk: manifest ? (risk >= 0 ? `max ${RISK_CLASSES[risk]}` : '-') : UNKNOWN,
  };
}

const COLUMNS: Array<[keyof EndpointSummary, string]> = [
  ['connector_id', 'CONNECTOR'],
  ['source', 'SOURCE'],
  ['transport', 'TRANSPORT'],
  ['enabled', 'ENABLED'],
  ['trust', 'TRUST'],
  ['claim', 'CLAIM'],
  ['devices', 'DEVICES'],
  ['mode', 'MODE'],
  ['risk', 'RISK'],
];

/** Renders summaries as an aligned text table. */
export function renderEndpointTable(rows: EndpointSummary[]): string {
  const cells = [COLUMNS.map(([, h]) => h), ...rows.map((r) => COLUMNS.map(([k]) => String(r[k])))];
  const widths = COLUMNS.map((_, i) => Math.max(...cells.map((c) => c[i]!.length)));
  return cells
    .map((c) =>
      c
        .map((v, i) => v.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
