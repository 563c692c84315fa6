import { ErrorCode, HostError } from '../../core/index.js';
import { manifestHostPaths, manifestSegments } from './path-manifest.js';

/** Every `<major>.<minor>` this host serves (v2 versioning.md §1.1). */
export const PROTOCOL_VERSIONS = ['1.0', '2.0'] as const;

/**
 * The header-less default. Through the overlap it MUST name a 1.x member (versioning.md §1.1): a request without
 * `OpenWOP-Version` is a v1 client's request.
 */
export const PREFERRED_VERSION = '1.0';

/** The major a request is served under, and the `OpenWOP-Version` its response carries (§1.4). */
export type Major = 1 | 2;
export const VERSION_OF: Record<Major, string> = { 1: '1.0', 2: '2.0' };

/** How a request path relates to the two path spaces (§1.2). */
export type PathKind = 'v1' | 'unversioned' | 'discovery' | 'other';

/**
 * Classifies a request path (no query): `/v1/…`, the unversioned surface (a path under a first segment of the
 * published path manifest, or an exact manifest path under `/host/`), the discovery document, or else (console,
 * operator and vendor paths).
 */
export function classifyPath(path: string): PathKind {
  if (path === '/.well-known/openwop') return 'discovery';
  if (path === '/v1' || path.startsWith('/v1/')) return 'v1';
  const first = /^\/([^/:]+)/.exec(path)?.[1];
  if (first !== undefined && manifestSegments().has(first)) return 'unversioned';
  if (manifestHostPaths().has(path)) return 'unversioned';
  return 'other';
}

/** The outcome of negotiation: serve under a major, or refuse with a v2 error (and the contract that refused). */
export type Negotiated = { major: Major } | { refuse: HostError; major: Major };

const HEADER = /^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))?$/;

function requestedMajor(header: string): number | undefined {
  const m = HEADER.exec(header.trim());
  return m ? Number(m[1]) : undefined;
}

/**
 * Applies the §1.3 table. `/v1/…` with a value other than 1 → `protocol_version_mismatch`; an unversioned path or
 * the discovery document with a major not in {@link PROTOCOL_VERSIONS} (or no parseable major) →
 * `protocol_version_unsupported` with `details.protocolVersions`; no header → the major of {@link PREFERRED_VERSION}.
 * Only the major selects (`2` and `2.0` are the same request).
 */
export function negotiate(kind: PathKind, header: string | undefined, served: readonly Major[] = [1, 2]): Negotiated {
  const preferred = Number(PREFERRED_VERSION.split('.')[0]) as Major;
  if (kind === 'other') return { major: preferred };
  if (header === undefined) return { major: kind === 'v1' ? 1 : preferred };
  const major = requestedMajor(header);
  if (kind === 'v1') {
    if (major === 1) return { major: 1 };
    return {
      major: 1,
      refuse: new HostError(ErrorCode.PROTOCOL_VERSION_MISMATCH, 'a /v1/ path is major 1; OpenWOP-Version must be 1', {
        requested: header,
      }),
    };
  }
  if ((major === 1 || major === 2) && served.includes(major)) return { major };
  return {
    major: preferred,
    refuse: new HostError(
      ErrorCode.PROTOCOL_VERSION_UNSUPPORTED,
      `this host does not serve OpenWOP-Version ${header}`,
      {
        protocolVersions: served.map((m) => VERSION_OF[m]),
        requested: header,
      },
    ),
  };
}
