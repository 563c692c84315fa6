import { PREFERRED_VERSION, PROTOCOL_VERSIONS } from './negotiation.js';
import { ERA_V2 } from '../event-log-era.js';

/** `GET /runs` page ceiling, advertised as `runList.maxPageSize`. */
export const RUN_LIST_MAX_PAGE = 200;

type Doc = Record<string, unknown>;
type Witness = 'witnessable-unaided' | 'witnessable-gated' | 'seam-gated' | 'claims-check' | 'negative-existence';

/**
 * The v1 families whose behaviour major 2 serves too (one engine, so a node type, a limit or a host service holds
 * under either major; a REST family only where its unversioned twin is mounted), with the `witness` the v2
 * declaration gives each (the schema's `core/capabilities.md#<family> — witness: …`; test/openwop/v2/discovery.test.ts
 * checks the table against it). Not carried here: `replay`, whose record {@link replayRecord} builds only while its
 * surfaces are served; `mcp`, whose v2 record (the revision ladder) its family builds ({@link v2DiscoveryRoot}
 * `o.records`); `testing`, whose `X-Force-Engine-Version` the v2 `POST /runs` does not honour.
 */
const CARRIED: Readonly<Record<string, Witness>> = {
  limits: 'witnessable-gated',
  subWorkflow: 'claims-check',
  idempotency: 'witnessable-gated',
  multiPartyConversation: 'witnessable-gated',
  agents: 'witnessable-gated',
  multiAgent: 'claims-check',
  prompts: 'witnessable-gated',
  promptLibrary: 'claims-check',
  aiEnvelope: 'witnessable-gated',
  agentRuntime: 'claims-check',
  providerUsage: 'witnessable-gated',
  envelopes: 'claims-check',
};

/** The operations a `replay` record binds (v2 replay.md §"The surface"): the fork and the effect-seam manifest. */
export const REPLAY_OPERATIONS = ['forkRun', 'getEffectSeamManifest'] as const;

/**
 * The v2 `replay` record (capabilities.md#replay, RFC 0140/0173): the v1 fork modes the closed record admits and the
 * manifest path, only while the v1 document advertises replay and every operation in {@link REPLAY_OPERATIONS} is
 * served. Suppression is not a flag in v2 (it binds with the record); the v1 `sideEffectSuppression` and
 * `nondeterminismSources` have no seat.
 */
function replayRecord(v1: unknown, served: ReadonlySet<string>): Doc | undefined {
  if (!isObject(v1) || v1.supported === false) return undefined;
  if (!REPLAY_OPERATIONS.every((op) => served.has(op))) return undefined;
  const modes = (Array.isArray(v1.modes) ? v1.modes : []).filter((m) => m === 'replay' || m === 'branch');
  if (modes.length === 0) return undefined;
  return { ...RECORD, witness: 'witnessable-gated', modes, effectSeamsManifest: '/host/effect-seams' };
}

/**
 * Operations a carried family's record binds (v2 runs.md §Surface gates, idempotency.md §Witness): the record is
 * advertised only while every one is mounted. `idempotency` binds `GET /runs/{runId}/effects` (the effect-ledger
 * projection), mounted only where the host ledger is (`serve` with the MHS runtime).
 */
const BINDS: Partial<Record<string, readonly string[]>> = { idempotency: ['getRunEffects'] };

/** v1 keys carried as they are: plain (non-record) members of the v2 root. */
const PLAIN = ['fixtures'] as const;

const RECORD = { status: 'stable', since: '2.0' } as const;

/** The v2 conformance seams profile (conformance.md §The seams profile, RFC 0168 §C.1). */
export const SEAMS_PROFILE_ID = 'openwop-conformance-seams-v2';

function isObject(v: unknown): v is Doc {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A v1 value without its `supported` flags at any depth: a v2 record is present or absent (capabilities.md §A.2). */
function withoutSupported(v: unknown): unknown {
  if (!isObject(v)) return v;
  const out: Doc = {};
  for (const [k, x] of Object.entries(v)) if (k !== 'supported') out[k] = withoutSupported(x);
  return out;
}

/** Rewrites a v1 path the family advertises to its unversioned major-2 twin (`/v1/prompts:render` → `/prompts:render`). */
function unversioned(family: string, value: Doc): Doc {
  const library = value.library;
  if (family !== 'prompts' || !isObject(library) || typeof library.renderEndpoint !== 'string') return value;
  return { ...value, library: { ...library, renderEndpoint: library.renderEndpoint.replace(/^\/v1\//, '/') } };
}

/** `supportedEnvelopes`/`schemaVersions`: v1 carries the catalog bare; v2 wraps it in a record's `kinds`. */
function catalogRecord(kinds: unknown, witness: Witness): Doc | undefined {
  const empty = Array.isArray(kinds) ? kinds.length === 0 : !isObject(kinds) || Object.keys(kinds).length === 0;
  // Absent is not [] (capabilities.md#supportedEnvelopes) but refuses the same kinds: every non-universal one.
  return empty ? undefined : { ...RECORD, witness, kinds };
}

/**
 * The closed v2 discovery root (`OpenWOP-Version: 2`; v2 capabilities.md §1, §3, RFC 0169 §A), projected from the v1
 * document: the metadata keys, the `runList` record of `GET /runs`, and a record for every family in
 * {@link CARRIED} the v1 document advertises, each `{status, since, witness, …facets}` without `supported` flags, and
 * the `replay` record when `served` (the mounted v2 operation ids) holds every surface it binds, and
 * `conformance.seamsProfile` when the seams profile is mounted (`o.seamsProfile`), and each record an installed
 * family builds for major 2 (`o.records`, e.g. `mcp`) whose family the v1 document advertises.
 * No v1-only key (`supportedTransports`, `protocolVersion`, …; §4).
 */
export function v2DiscoveryRoot(
  v1: Doc,
  served: ReadonlySet<string> = new Set(),
  o: { seamsProfile?: boolean; records?: Readonly<Record<string, Doc>> } = {},
): Doc {
  const root: Doc = {
    protocolVersions: [...PROTOCOL_VERSIONS],
    preferredVersion: PREFERRED_VERSION,
    engineVersion: Number(v1.engineVersion ?? 0),
    // persistence.md: the value the host writes for new runs (3 on every creation path while major 2 is served).
    eventLogSchemaVersion: ERA_V2,
  };
  if (isObject(v1.implementation)) root.implementation = v1.implementation;
  const envelopes = catalogRecord(v1.supportedEnvelopes, 'witnessable-gated');
  if (envelopes) root.supportedEnvelopes = envelopes;
  const versions = catalogRecord(v1.schemaVersions, 'witnessable-gated');
  if (versions) root.schemaVersions = versions;
  for (const [family, witness] of Object.entries(CARRIED)) {
    const value = v1[family];
    if (!isObject(value) || !(BINDS[family] ?? []).every((op) => served.has(op))) continue;
    root[family] = { ...RECORD, witness, ...unversioned(family, withoutSupported(value) as Doc) };
  }
  const replay = replayRecord(v1.replay, served);
  if (replay) root.replay = replay;
  for (const [family, record] of Object.entries(o.records ?? {}))
    if (isObject(v1[family])) root[family] = { ...RECORD, ...record };
  root.runList = {
    ...RECORD,
    witness: 'witnessable-gated',
    maxPageSize: RUN_LIST_MAX_PAGE,
    filters: ['workflowId', 'status'],
  };
  const conformance: Doc = {};
  if (isObject(v1.conformance) && typeof v1.conformance.mockAgent === 'boolean')
    conformance.mockAgent = v1.conformance.mockAgent;
  // The seams profile is metadata, never a capability flag (no `testSeams`): advertised while it is mounted.
  if (o.seamsProfile) conformance.seamsProfile = SEAMS_PROFILE_ID;
  if (Object.keys(conformance).length) root.conformance = conformance;
  for (const k of PLAIN) if (v1[k] !== undefined) root[k] = v1[k];
  return root;
}
