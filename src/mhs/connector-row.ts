/**
 * Connector rows (HOST-061): the integration unit. One row per endpoint, stable id `mhs-<slug>`,
 * a launch command (stdio) or URL (Streamable HTTP), and an `enabled` flag that only an operator
 * action sets (HOST-066). Persistence lives in `src/policy/connector-store.ts`.
 */
import { sha256Hex } from '../core/index.js';
import type { EndpointDescriptor } from './wire-types.js';

/** Credentials of one endpoint, never shared with another (HOST-011). */
export type EndpointAuth =
  | { scheme: 'local' }
  | { scheme: 'none' }
  /** `token` inline or `token_env` naming an environment variable that holds it. */
  | { scheme: 'bearer'; token?: string; token_env?: string };

/** Where an endpoint was found (HOST-010), in precedence order, highest first. */
export const SOURCE_KINDS = ['env', 'file', 'registry', 'well-known', 'federated'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

/** A source with its location, e.g. `{kind:"file", ref:"/home/op/.mhs/endpoints.json"}`. */
export interface SourceRef {
  kind: SourceKind;
  /** `MHS_ENDPOINTS`, a file path, `db`, a base URL or a registry URL. */
  ref: string;
  /**
   * A federated record's signature (issue 20, HOST-014; registry-signature.ts): `signed` by the configured registry
   * key `key_id`, `unsigned`, or `unverified` (signed, but no registry key was configured to check it).
   */
  record?: 'signed' | 'unsigned' | 'unverified';
  key_id?: string;
}

/** One connector row. */
export interface ConnectorRow {
  connector_id: string;
  transport: 'stdio' | 'http';
  /** stdio: argv of the projection process. */
  command?: string[];
  /** http: the MCP (Streamable HTTP) URL. */
  url?: string;
  /** http: the base URL whose `/.well-known/mhs.json` described it. */
  base_url?: string;
  /** Known from the descriptor (http) or after the first admitted connection (stdio). */
  endpoint_id: string | null;
  display_name?: string;
  /** Defaults to false; only `src/policy/enablement.ts` sets it, on an operator action. */
  enabled: boolean;
  /** The source that produced it under the precedence of HOST-010. */
  source: SourceRef;
  /** Every source that listed it, highest precedence first. */
  seen_in?: SourceRef[];
  auth: EndpointAuth;
  /** The descriptor last fetched for it (http), or null. */
  descriptor?: EndpointDescriptor | null;
}

/** `a-z0-9-` slug, at most 48 characters. */
export function slugify(text: string): string {
  const s = text
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return s.slice(0, 48).replace(/-+$/, '') || 'endpoint';
}

/**
 * Stable connector id: `mhs-<slug of endpoint id>` for an endpoint with a known id, else
 * `mhs-stdio-<8 hex of the command>` for a stdio command (its id is only known once connected).
 */
export function connectorIdFor(key: { endpoint_id?: string | null; command?: readonly string[] }): string {
  if (key.endpoint_id) return `mhs-${slugify(key.endpoint_id)}`;
  if (key.command) return `mhs-stdio-${sha256Hex(JSON.stringify(key.command)).slice(0, 8)}`;
  throw new TypeError('connectorIdFor needs an endpoint_id or a command');
}

/** The auth a row is shown with: never the token itself. */
export function describeAuth(auth: EndpointAuth): string {
  if (auth.scheme === 'bearer') return auth.token_env ? `bearer (env ${auth.token_env})` : 'bearer';
  return auth.scheme;
}

/**
 * Splits a command line into argv: whitespace separates, single or double quotes group.
 * Used for `MHS_ENDPOINTS` `stdio:` entries and string `command`s in endpoints.json.
 */
export function splitCommandLine(line: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(line); m; m = re.exec(line)) out.push(m[1] ?? m[2] ?? m[3] ?? '');
  return out;
}
