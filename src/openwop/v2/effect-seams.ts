/** The build a manifest names (effect-seam-manifest.schema.json `host.build`). */
export interface HostBuild {
  kind: 'image-digest' | 'commit' | 'artifact-sha256';
  id: string;
}

/** One row of the manifest: an outbound effect path the node runtime can reach (v2 replay.md §"The effect-seam manifest"). */
export interface EffectSeam {
  seam: string;
  kind: 'http' | 'queue' | 'storage' | 'provider-sdk' | 'webhook-fanout';
  guarded: true;
  guardedBy: string;
  branchReFires?: boolean;
  note?: string;
}

// One suppression mechanism guards every seam (RFC 0140 rule 5): classification before execution and a default-deny
// guard, both in ReplayControl, which wraps every node outermost.
const GUARD =
  'ReplayControl (src/openwop/replay.ts): default-deny node classification; in a replay fork a side-effecting node ' +
  'resolves from the source run’s recorded outcome (sourceRunId, nodeId, n) or fails replay_source_missing, and ' +
  'pure nodes are refused every host service surface';

// The vendored schema's `kind` enum has no value for a child-process pipe (replay.md's `other`), so the stdio
// transport of the MHS and MCP seams is named in `note` rather than left out (replay.md: completeness outranks).
const STDIO =
  'also reached over a stdio child process (a pipe: replay.md kind `other`, which the vendored schema cannot name); ' +
  'the same guard covers it';

/**
 * Every outbound effect path this host's node runtime can reach, whatever the running configuration installs: a seam
 * the configuration leaves unreachable is still listed (a false positive costs the suite one inapplicable row; an
 * omission would hide a seam, replay.md §"The effect-seam manifest"). A `branch` fork re-fires each by design (G6).
 */
export const EFFECT_SEAMS: readonly EffectSeam[] = [
  {
    seam: 'mhs.governed-call',
    kind: 'http',
    guarded: true,
    guardedBy: GUARD,
    branchReFires: true,
    note: `MHS device commands through the governed call (mhs.invoke, mhs.task) over Streamable HTTP connectors; ${STDIO}`,
  },
  {
    seam: 'mcp.client-call',
    kind: 'http',
    guarded: true,
    guardedBy: GUARD,
    branchReFires: true,
    note: `ctx.mcp callTool / listTools / readResource on operator-configured MCP servers over Streamable HTTP; ${STDIO}`,
  },
  {
    seam: 'provider.model-call',
    kind: 'provider-sdk',
    guarded: true,
    guardedBy: GUARD,
    branchReFires: true,
    note: 'model provider calls (serve --model: OpenAI, Anthropic) behind ctx.aiEnvelope, core.ai.*, the agent runtime, manifest agents and the supervisor',
  },
  {
    seam: 'http.remote-run',
    kind: 'http',
    guarded: true,
    guardedBy: GUARD,
    branchReFires: true,
    note: 'mhs.remoteRun: POST /v1/runs on a peer host (serve --peers, RFC 0040); a replay never contacts the peer',
  },
];

/** `GET /host/effect-seams` (effect-seam-manifest.schema.json, RFC 0173 §C). */
export function effectSeamManifest(name: string, build: HostBuild): Record<string, unknown> {
  return { manifestVersion: '1', host: { name, build }, seams: EFFECT_SEAMS.map((s) => ({ ...s })) };
}
