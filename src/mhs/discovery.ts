/**
 * Endpoint discovery from every configured source in a fixed precedence (HOST-010), recording the
 * source of each endpoint. Discovery reads configuration and fetches descriptors; it never opens an
 * MCP connection, never spawns a projection and never enables anything (HOST-066, HOST-068).
 *
 * Precedence, highest first: `MHS_ENDPOINTS` > endpoints.json > local registry (stored connector
 * rows) > `/.well-known/mhs.json` at configured base URLs > federated registries (only when the
 * operator enabled them). The same endpoint (same `endpoint_id`, or same stdio command) found in
 * several sources is listed once, under the highest source, with every source in `seen_in`.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode, HostError, RealClock, toHostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { SOURCE_KINDS, connectorIdFor } from './connector-row.js';
import type { ConnectorRow, EndpointAuth, SourceRef } from './connector-row.js';
import {
  fetchDescriptor,
  fetchJson,
  parseEndpointsDocument,
  readEnvSource,
  readFileSource,
} from './discovery-sources.js';
import type { Candidate, SourceRead } from './discovery-sources.js';
import { recordTrust } from './registry-signature.js';
import type { RegistryKey } from './registry-signature.js';
import type { EndpointDescriptor } from './wire-types.js';

/** One discovered endpoint: the fields of a connector row except `enabled`. */
export type DiscoveredEndpoint = Omit<ConnectorRow, 'enabled'> & {
  /** Identity used to merge sources: the endpoint id, or `stdio:` + the command. */
  key: string;
  seen_in: SourceRef[];
};

export interface DiscoveryResult {
  endpoints: DiscoveredEndpoint[];
  /** One error per malformed source, entry or descriptor; each names its source in `details.source`. */
  errors: HostError[];
  /** Same-origin redirects followed while fetching descriptors (cross-origin ones are refused, in `errors`). */
  redirects: { source: string; from: string; to: string }[];
}

/** Options of {@link discoverEndpoints}. */
export interface DiscoveryOptions {
  /** Who asked. `model` is refused: nothing is discovered or connected because a model asked (HOST-010). */
  requestedBy: 'operator' | 'config';
  /** Environment holding `MHS_ENDPOINTS`. Default `process.env`. */
  env?: Record<string, string | undefined>;
  /** endpoints.json path; default `$MHS_ENDPOINTS_FILE` or `~/.mhs/endpoints.json`; null skips the source. */
  endpointsFile?: string | null;
  /** The local registry: stored connector rows. */
  registry?: () => Promise<ConnectorRow[]>;
  /** Base URLs whose `/.well-known/mhs.json` is fetched. */
  baseUrls?: string[];
  /** Federated registries (documents in the endpoints.json format); off unless the operator enabled them. */
  federated?: { enabled: boolean; registries: string[]; keys?: readonly RegistryKey[] };
  fetch?: typeof fetch;
  clock?: Clock;
  /** Deadline per descriptor or registry fetch. Default 5000 ms. */
  timeoutMs?: number;
}

/** How far a record from each source is trusted before the endpoint authenticates (HOST-014, CORE-122). */
export function sourceTrust(kind: SourceRef['kind']): string {
  switch (kind) {
    case 'env':
    case 'file':
      return 'operator-configured';
    case 'registry':
      return 'host registry';
    case 'well-known':
      return 'unauthenticated descriptor';
    case 'federated':
      return 'untrusted registry record';
  }
}

/**
 * A row's source as listed (`endpoints list`): `kind:ref`, and for a federated record what its signature proved
 * (HOST-014): `signed <key>`, `unsigned`, or `signed, unverified` (no registry key configured).
 */
export function sourceLabel(source: SourceRef): string {
  const at = `${source.kind}:${source.ref}`;
  if (source.kind !== 'federated') return at;
  if (source.record === 'signed') return `${at} (signed ${source.key_id ?? '?'})`;
  if (source.record === 'unverified') return `${at} (signed, unverified: no --registry-key)`;
  return `${at} (unsigned)`;
}

/** Default endpoints.json path. */
export function defaultEndpointsFile(env: Record<string, string | undefined> = process.env): string {
  return env.MHS_ENDPOINTS_FILE || join(homedir(), '.mhs', 'endpoints.json');
}

const hasCredential = (a: EndpointAuth) => a.scheme === 'bearer' && Boolean(a.token || a.token_env);
const rank = (s: SourceRef) => SOURCE_KINDS.indexOf(s.kind);
const stdioKey = (command: readonly string[]) => `stdio:${JSON.stringify(command)}`;

function fromDescriptor(
  d: EndpointDescriptor,
  c: Extract<Candidate, { kind: 'http' }>,
): Omit<DiscoveredEndpoint, 'seen_in'> {
  const http = d.transports.find((t) => t.kind === 'mcp-http');
  const stdio = d.transports.find((t) => t.kind === 'mcp-stdio');
  const auth: EndpointAuth = c.auth ?? (d.auth.scheme === 'bearer' ? { scheme: 'bearer' } : { scheme: 'none' });
  const common = {
    key: d.endpoint_id,
    connector_id: connectorIdFor({ endpoint_id: d.endpoint_id }),
    endpoint_id: d.endpoint_id,
    display_name: d.display_name,
    base_url: c.baseUrl,
    source: c.source,
    descriptor: d,
  };
  if (http && http.kind === 'mcp-http') return { ...common, transport: 'http', url: http.url, auth };
  const command = stdio && stdio.kind === 'mcp-stdio' ? stdio.command : [];
  return { ...common, transport: 'stdio', command, auth: { scheme: 'local' } };
}

function fromRow(r: ConnectorRow): Omit<DiscoveredEndpoint, 'seen_in'> {
  const { enabled: _e, seen_in: _s, ...rest } = r;
  const key = r.transport === 'stdio' && r.command ? stdioKey(r.command) : (r.endpoint_id ?? r.connector_id);
  return { ...rest, key, source: { kind: 'registry', ref: 'db' } };
}

type FetchOpts = {
  fetch?: typeof fetch;
  clock: Clock;
  timeoutMs: number;
  onRedirect?: (from: string, to: string, source: SourceRef) => void;
};

async function resolve(c: Candidate, o: FetchOpts): Promise<Omit<DiscoveredEndpoint, 'seen_in'>> {
  if (c.kind === 'stdio')
    return {
      key: stdioKey(c.command),
      connector_id: connectorIdFor({ command: c.command }),
      transport: 'stdio',
      command: c.command,
      endpoint_id: null,
      source: c.source,
      // A child process inherits the host's identity (HOST-011).
      auth: { scheme: 'local' },
      descriptor: null,
    };
  const { onRedirect, ...rest } = o;
  const hops = onRedirect ? { onRedirect: (from: string, to: string) => onRedirect(from, to, c.source) } : {};
  return fromDescriptor(await fetchDescriptor(c.baseUrl, c.source, { ...rest, ...hops }), c);
}

/** A record's source with what its signature proved; null (and the refusal in `errors`) when it failed. */
function federatedSource(source: SourceRef, keys: readonly RegistryKey[], errors: HostError[]) {
  return (raw: unknown, index: number): SourceRef | null => {
    const t = recordTrust(raw, keys);
    if (t.record === 'invalid') {
      errors.push(
        new HostError(
          ErrorCode.HOST_REGISTRY_SIGNATURE_INVALID,
          `federated registry ${source.ref} record ${index + 1} refused: ${t.reason}`,
          { source: `federated:${source.ref}`, index, reason: t.reason },
          { remediation: 'Check the registry key (--registry-key) or ask the registry to re-sign the record.' },
        ),
      );
      return null;
    }
    return { ...source, ...t };
  };
}

async function readFederated(urls: string[], o: FetchOpts, keys: readonly RegistryKey[] = []) {
  const out: SourceRead = { candidates: [], errors: [] };
  for (const url of urls) {
    const source: SourceRef = { kind: 'federated', ref: url };
    try {
      const { onRedirect, ...rest } = o;
      const doc = await fetchJson(url, {
        ...rest,
        ...(onRedirect ? { onRedirect: (from: string, to: string) => onRedirect(from, to, source) } : {}),
      });
      const r = parseEndpointsDocument(JSON.stringify(doc), source, federatedSource(source, keys, out.errors));
      out.candidates.push(...r.candidates);
      out.errors.push(...r.errors);
    } catch (e) {
      out.errors.push(
        new HostError(ErrorCode.HOST_CONFIG_INVALID, `federated registry ${url} failed: ${toHostError(e).message}`, {
          source: `federated:${url}`,
        }),
      );
    }
  }
  return out;
}

/**
 * Discovers endpoints from every configured source (see the module comment for the precedence).
 * Never throws for a bad source: its error is in `errors` and the other sources still count.
 * @throws HostError `MHS.HOST.POLICY_DENIED` when `requestedBy` is not an operator or the configuration.
 */
export async function discoverEndpoints(opts: DiscoveryOptions): Promise<DiscoveryResult> {
  if (opts.requestedBy !== 'operator' && opts.requestedBy !== 'config')
    throw new HostError(
      ErrorCode.HOST_POLICY_DENIED,
      'endpoint discovery runs only on operator action or host configuration, never because a model asked',
      { requested_by: String(opts.requestedBy) },
    );
  const env = opts.env ?? process.env;
  const redirects: DiscoveryResult['redirects'] = [];
  const o: FetchOpts = {
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
    clock: opts.clock ?? new RealClock(),
    timeoutMs: opts.timeoutMs ?? 5000,
    onRedirect: (from, to, source) => redirects.push({ source: `${source.kind}:${source.ref}`, from, to }),
  };
  const errors: HostError[] = [];
  const reads: SourceRead[] = [readEnvSource(env.MHS_ENDPOINTS)];
  const file = opts.endpointsFile === undefined ? defaultEndpointsFile(env) : opts.endpointsFile;
  if (file) reads.push(await readFileSource(file));
  const wellKnown: SourceRead = {
    candidates: (opts.baseUrls ?? []).map((u) => ({
      kind: 'http',
      baseUrl: u,
      source: { kind: 'well-known', ref: u },
    })),
    errors: [],
  };
  reads.push(wellKnown);
  if (opts.federated?.enabled) reads.push(await readFederated(opts.federated.registries, o, opts.federated.keys));

  const candidates = reads.flatMap((r) => r.candidates);
  for (const r of reads) errors.push(...r.errors);
  const settled = await Promise.allSettled(candidates.map((c) => resolve(c, o)));
  const resolved: Array<Omit<DiscoveredEndpoint, 'seen_in'>> = [];
  settled.forEach((s) => {
    if (s.status === 'fulfilled') resolved.push(s.value);
    else errors.push(toHostError(s.reason, ErrorCode.HOST_DESCRIPTOR_INVALID));
  });
  if (opts.registry) {
    try {
      resolved.push(...(await opts.registry()).map(fromRow));
    } catch (e) {
      errors.push(
        new HostError(ErrorCode.HOST_CONFIG_INVALID, `local registry could not be read: ${toHostError(e).message}`, {
          source: 'registry:db',
        }),
      );
    }
  }
  // Stable sort by precedence; within a source, listing order.
  const ordered = resolved.map((r, i) => ({ r, i })).sort((a, b) => rank(a.r.source) - rank(b.r.source) || a.i - b.i);
  const byKey = new Map<string, DiscoveredEndpoint>();
  for (const { r } of ordered) {
    const seen = byKey.get(r.key);
    if (!seen) {
      byKey.set(r.key, { ...r, seen_in: [r.source] });
      continue;
    }
    if (!seen.seen_in.some((s) => s.kind === r.source.kind && s.ref === r.source.ref)) seen.seen_in.push(r.source);
    // Credentials come from the highest source that states them; they stay with this endpoint (HOST-011).
    if (seen.transport === 'http' && !hasCredential(seen.auth) && hasCredential(r.auth)) seen.auth = r.auth;
    if (!seen.endpoint_id && r.endpoint_id) seen.endpoint_id = r.endpoint_id;
    if (!seen.descriptor && r.descriptor) seen.descriptor = r.descriptor;
  }
  return { endpoints: [...byKey.values()], errors, redirects };
}
