/**
 * Readers of the discovery sources (HOST-010). Each returns candidates plus errors that name the
 * source; a malformed source never throws past its reader.
 */
import { readFile } from 'node:fs/promises';
import { ErrorCode, HostError, toHostError } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { splitCommandLine } from './connector-row.js';
import type { EndpointAuth, SourceRef } from './connector-row.js';
import { checkWire, documentChecker } from './validate.js';
import type { EndpointDescriptor } from './wire-types.js';

/** An entry as a source lists it, before descriptors are fetched. */
export type Candidate =
  | { kind: 'http'; baseUrl: string; auth?: EndpointAuth; source: SourceRef }
  | { kind: 'stdio'; command: string[]; source: SourceRef };

/** What a reader returns. */
export interface SourceRead {
  candidates: Candidate[];
  errors: HostError[];
}

const authSchema = {
  oneOf: [
    { type: 'object', required: ['scheme'], properties: { scheme: { enum: ['none', 'local'] } } },
    {
      type: 'object',
      required: ['scheme'],
      properties: {
        scheme: { const: 'bearer' },
        token: { type: 'string', minLength: 1 },
        token_env: { type: 'string', minLength: 1 },
      },
      anyOf: [{ required: ['token'] }, { required: ['token_env'] }],
    },
  ],
} as const;

/** Schema of one entry of `~/.mhs/endpoints.json` (and of a federated registry document). */
export const endpointEntrySchema = {
  $id: 'https://mhs-host.local/schemas/endpoints-entry',
  type: 'object',
  oneOf: [{ required: ['url'] }, { required: ['command'] }],
  properties: {
    url: { type: 'string', pattern: '^https?://' },
    command: {
      oneOf: [
        { type: 'string', minLength: 1 },
        { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
      ],
    },
    auth: authSchema,
  },
} as const;

/** Schema of the document: `{"endpoints":[...]}`; entries are checked one by one. */
export const endpointsFileSchema = {
  $id: 'https://mhs-host.local/schemas/endpoints-file',
  type: 'object',
  required: ['endpoints'],
  properties: { endpoints: { type: 'array' } },
} as const;

interface EndpointEntry {
  url?: string;
  command?: string | string[];
  auth?: EndpointAuth;
}

const checkEndpointsFile = documentChecker<{ endpoints: unknown[] }>(endpointsFileSchema);
const checkEntry = documentChecker<EndpointEntry>(endpointEntrySchema);

const configError = (source: SourceRef, message: string, details: Record<string, unknown> = {}) =>
  new HostError(ErrorCode.HOST_CONFIG_INVALID, `${source.kind} source ${source.ref}: ${message}`, {
    source: `${source.kind}:${source.ref}`,
    ...details,
  });

/** `MHS_ENDPOINTS`: comma-separated `http(s)://` base URLs or `stdio:<command line>`. */
export function readEnvSource(value: string | undefined, name = 'MHS_ENDPOINTS'): SourceRead {
  const source: SourceRef = { kind: 'env', ref: name };
  const out: SourceRead = { candidates: [], errors: [] };
  if (!value || !value.trim()) return out;
  value.split(',').forEach((raw, index) => {
    const entry = raw.trim();
    if (!entry) return;
    if (entry.startsWith('stdio:')) {
      const command = splitCommandLine(entry.slice('stdio:'.length));
      if (command.length) out.candidates.push({ kind: 'stdio', command, source });
      else out.errors.push(configError(source, `entry ${index + 1} is "stdio:" without a command`, { entry, index }));
      return;
    }
    if (/^https?:\/\/[^\s/]+/.test(entry) && URL.canParse(entry)) {
      out.candidates.push({ kind: 'http', baseUrl: entry, source });
      return;
    }
    out.errors.push(
      configError(source, `entry ${index + 1} "${entry}" is neither an http(s):// base URL nor stdio:<command>`, {
        entry,
        index,
      }),
    );
  });
  return out;
}

/**
 * Parses an endpoints document (`{"endpoints":[{"url"|"command","auth"?}]}`) from text. `sourceOf` gives an entry's
 * own source (a federated record's signature trust); default `source`.
 */
export function parseEndpointsDocument(
  text: string,
  source: SourceRef,
  sourceOf: (raw: unknown, index: number) => SourceRef | null = () => source,
): SourceRead {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return { candidates: [], errors: [configError(source, `is not JSON: ${(e as Error).message}`)] };
  }
  const check = checkEndpointsFile(doc);
  if (!check.ok)
    return {
      candidates: [],
      errors: [configError(source, 'is not {"endpoints":[{"url"|"command","auth"?}, ...]}', { issues: check.issues })],
    };
  const out: SourceRead = { candidates: [], errors: [] };
  // A bad entry is reported and skipped; the good entries of the same document still count.
  check.value.endpoints.forEach((raw, index) => {
    const entry = checkEntry(raw);
    if (!entry.ok) {
      out.errors.push(
        configError(
          source,
          `entry ${index + 1} is not {"url"|"command","auth"?}: ${entry.issues
            .slice(0, 3)
            .map((i) => `${i.path} ${i.message}`)
            .join('; ')}`,
          { index, issues: entry.issues },
        ),
      );
      return;
    }
    const e = entry.value;
    // null: the entry was refused by the caller (a federated record whose signature failed).
    const from = sourceOf(raw, index);
    if (!from) return;
    if (e.url) out.candidates.push({ kind: 'http', baseUrl: e.url, source: from, ...(e.auth ? { auth: e.auth } : {}) });
    else
      out.candidates.push({
        kind: 'stdio',
        command: Array.isArray(e.command) ? e.command : splitCommandLine(e.command ?? ''),
        source: from,
      });
  });
  return out;
}

/** `~/.mhs/endpoints.json` (or the path given). A missing file is not an error. */
export async function readFileSource(path: string): Promise<SourceRead> {
  const source: SourceRef = { kind: 'file', ref: path };
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { candidates: [], errors: [] };
    return { candidates: [], errors: [configError(source, `cannot be read: ${(e as Error).message}`)] };
  }
  return parseEndpointsDocument(text, source);
}

/** The well-known descriptor URL of a base URL (joined to its path, so prefixes work). */
export function wellKnownUrl(baseUrl: string): string {
  const base = new URL(baseUrl);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  return new URL('.well-known/mhs.json', base).toString();
}

/** Limits of a discovery fetch (issue 20, HOST-010): a descriptor or registry document is small. */
export const DISCOVERY_MAX_BYTES = 256 * 1024;
const MAX_REDIRECTS = 3;

/** A refused discovery fetch: the reason is a stable word in `details.reason`. */
class DiscoveryFetchError extends Error {
  constructor(
    message: string,
    readonly details: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Reads a body up to `maxBytes`; past it the rest is never read. */
async function readLimited(res: Response, maxBytes: number, url: string): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes)
    throw new DiscoveryFetchError(`${url} declares ${declared} bytes, over the ${maxBytes}-byte discovery limit`, {
      reason: 'too_large',
      limit: maxBytes,
    });
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new DiscoveryFetchError(`${url} sent more than the ${maxBytes}-byte discovery limit`, {
        reason: 'too_large',
        limit: maxBytes,
      });
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Fetch with a deadline on the injected clock over the whole exchange, a size limit, and redirects followed only
 * within the same origin (issue 20, HOST-010: another origin would store an endpoint the operator never named).
 * Each same-origin hop is reported to `onRedirect`.
 */
export async function fetchJson(
  url: string,
  opts: {
    fetch?: typeof fetch;
    clock: Clock;
    timeoutMs: number;
    maxBytes?: number;
    onRedirect?: (from: string, to: string) => void;
  },
): Promise<unknown> {
  const ac = new AbortController();
  const h = opts.clock.setTimeout(() => ac.abort(), opts.timeoutMs);
  try {
    let at = url;
    for (let hop = 0; ; hop++) {
      const res = await (opts.fetch ?? fetch)(at, {
        signal: ac.signal,
        redirect: 'manual',
        headers: { accept: 'application/json' },
      });
      if (res.status >= 300 && res.status < 400) {
        const location = res.headers.get('location');
        await res.body?.cancel().catch(() => undefined);
        const next = location ? new URL(location, at) : null;
        if (!next) throw new DiscoveryFetchError(`${at} redirected without a Location`, { reason: 'bad_redirect' });
        if (next.origin !== new URL(at).origin)
          throw new DiscoveryFetchError(`${at} redirected to another origin (${next.origin}); not followed`, {
            reason: 'cross_origin_redirect',
            location: next.toString(),
          });
        if (hop >= MAX_REDIRECTS)
          throw new DiscoveryFetchError(`${url} redirected more than ${MAX_REDIRECTS} times`, {
            reason: 'too_many_redirects',
          });
        opts.onRedirect?.(at, next.toString());
        at = next.toString();
        continue;
      }
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const text = await readLimited(res, opts.maxBytes ?? DISCOVERY_MAX_BYTES, at);
      return JSON.parse(text) as unknown;
    }
  } catch (e) {
    if (ac.signal.aborted) throw new Error(`no complete answer within ${opts.timeoutMs} ms`);
    throw e;
  } finally {
    opts.clock.clearTimeout(h);
  }
}

/**
 * Fetches and validates `/.well-known/mhs.json` (wire contract §2).
 * @throws HostError `MHS.HOST.DESCRIPTOR_INVALID` naming the source and URL.
 */
export async function fetchDescriptor(
  baseUrl: string,
  source: SourceRef,
  opts: { fetch?: typeof fetch; clock: Clock; timeoutMs: number; onRedirect?: (from: string, to: string) => void },
): Promise<EndpointDescriptor> {
  const url = wellKnownUrl(baseUrl);
  const details = { source: `${source.kind}:${source.ref}`, url };
  let body: unknown;
  try {
    body = await fetchJson(url, opts);
  } catch (e) {
    const refused = e instanceof DiscoveryFetchError ? e.details : {};
    throw new HostError(
      ErrorCode.HOST_DESCRIPTOR_INVALID,
      `descriptor ${url} (from ${details.source}) could not be fetched: ${e instanceof Error ? e.message : toHostError(e).message}`,
      { ...details, ...refused },
      {
        remediation:
          refused['reason'] === 'cross_origin_redirect'
            ? 'Configure the endpoint by the URL it is served at; redirects to another origin are never followed.'
            : 'Check that the endpoint is running and the base URL is right.',
      },
    );
  }
  const check = checkWire('descriptor', body);
  if (!check.ok)
    throw new HostError(
      ErrorCode.HOST_DESCRIPTOR_INVALID,
      `descriptor ${url} (from ${details.source}) is malformed: ${check.issues
        .slice(0, 3)
        .map((i) => `${i.path} ${i.message}`)
        .join('; ')}`,
      { ...details, issues: check.issues },
      { remediation: 'Fix the endpoint descriptor (shared/spec/mhs-wire.md §2).' },
    );
  return check.value;
}
