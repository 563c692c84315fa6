/**
 * The MCP revision ladder `ctx.mcp` negotiates within (v2 interop.md §The facets: `revisions`, `preferredVersion`,
 * `minimumRevision`, `refreshedAt`), derived from the MCP SDK the host runs rather than listed here: the 2025-era
 * rungs are the SDK's exported `SUPPORTED_PROTOCOL_VERSIONS` (the `initialize` list), the legacy preference its
 * `LATEST_PROTOCOL_VERSION`, the default floor its `DEFAULT_NEGOTIATED_PROTOCOL_VERSION`. The SDK ships no public
 * constant for the modern (`server/discover`) era (its own note: "no public modern-version constant ships before
 * era-aware list semantics exist"), so the one modern rung is {@link MCP_MODERN_REVISION}, the revision its
 * `versionNegotiation` documents and this host pins in `protocol: "modern"`.
 */
import {
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/client';

/** The stateless revision (no session, `server/discover`); the host speaks it when a server offers it. */
export const MCP_MODERN_REVISION = '2026-07-28';

/**
 * The floor when the config names none: the revision the SDK assumes for a peer that names none (Streamable HTTP's
 * default). Older rungs (`2024-11-05`, `2024-10-07`: the HTTP+SSE era) are refused.
 */
export const DEFAULT_MINIMUM_REVISION: string = DEFAULT_NEGOTIATED_PROTOCOL_VERSION;

/** The revision policy of `--mcp-servers` (`protocol`). */
export type McpProtocolMode = 'auto' | 'modern' | 'legacy';

/** What `ctx.mcp` offers and accepts. Revisions are ISO dates, so string order is date order. */
export interface McpRevisionLadder {
  /** Every revision the client can land on, newest first, none below the floor. */
  revisions: string[];
  /** The revision asked for first: the modern one unless the policy is `legacy`. */
  preferredVersion: string;
  /** Below it a negotiation fails closed with `interop_version_unsupported` (interop.md §The floor). */
  minimumRevision: string;
}

/** True when `revision` is older than `floor` (ISO dates compare as strings). */
export function belowFloor(revision: string, floor: string): boolean {
  return revision < floor;
}

/**
 * The ladder for a policy and floor, read from the SDK each time it is called. Empty when the floor is above every
 * rung the policy can reach (the config refuses such a floor: see `parseMcpServersConfig`).
 */
export function revisionLadder(
  mode: McpProtocolMode = 'auto',
  minimumRevision: string = DEFAULT_MINIMUM_REVISION,
): McpRevisionLadder {
  const legacy = mode === 'modern' ? [] : [...SUPPORTED_PROTOCOL_VERSIONS];
  const modern = mode === 'legacy' ? [] : [MCP_MODERN_REVISION];
  const revisions = [...modern, ...legacy]
    .filter((r) => !belowFloor(r, minimumRevision))
    .sort()
    .reverse();
  return {
    revisions,
    preferredVersion: mode === 'legacy' ? LATEST_PROTOCOL_VERSION : MCP_MODERN_REVISION,
    minimumRevision,
  };
}
