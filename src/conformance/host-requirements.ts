/**
 * MHS-009 host requirements as data (shared/seeds/mhs-009-host-profile.txt). Tests cite an id in
 * their name (`HOST-091: ...`); test/requirements/coverage.test.ts fails when an id is neither cited nor listed
 * in {@link NOT_EXERCISED} with its reason, and the conformance report (report.ts) is built from the same data.
 */
export const HOST_REQUIREMENTS: Record<string, string> = {
  'HOST-001': 'satisfy the level matrix for the claimed level',
  'HOST-002': 'tested against a CL3+ endpoint, else label the report a self-test',
  'HOST-003': 'never claim MHS replaces hardware safety; show NOT_CERTIFIED and mode/fidelity before actuation',
  'HOST-010': 'discover from all sources in deterministic precedence, recording the source',
  'HOST-011': 'authenticate per declared auth, credentials per endpoint, stdio is auth "local"',
  'HOST-012': 'cache profiles by (endpoint, device, instance, manifest_digest); drop digestless profiles',
  'HOST-013': 'present mode, risk, summary, capabilities, determinism and fidelity gaps to the model',
  'HOST-014': 'display conformance claim and trust; a missing claim is "no claim"',
  'HOST-015': 'fidelity gaps in the model context and at the approval surface',
  'HOST-020': 'one code path for every endpoint; no branch on device type or vendor',
  'HOST-021': 'uniform policy; a new device family needs a manifest, not host code',
  'HOST-022': 'family macros lower to capability calls with normal receipts',
  'HOST-030': 'tool descriptions generated from schemas and tags, regenerated on digest change',
  'HOST-031': "capability tool input is the binding's schema plus control fields; validate before send",
  'HOST-032': 'approval per policy; never auto-approve R2+ at CL3; trusted e-stop bypasses approval only',
  'HOST-033': 'tool output carries the full receipt, never a summary',
  'HOST-034': 'a session per task/device scope with only the needed capabilities, closed at task end',
  'HOST-035': 'principal kind agent for model calls; human principals for R3; model never supplies one',
  'HOST-036': 'heartbeat before expires_at; on expiry reopen, re-read, re-check; never blind retry',
  'HOST-037': 'deadlines enforced, deadline_ms below transport timeout; UNKNOWN is not retryable',
  'HOST-040': 'approval surface shows everything in one view',
  'HOST-041': 'approval bound to the input digest; any change voids it',
  'HOST-042': 'approval rendered by trusted UI; model claims are not evidence',
  'HOST-043': 'deny by default',
  'HOST-044': 'human_click and policy_rule (and dual_control) recorded exactly',
  'HOST-045': 'approval decisions in the ledger',
  'HOST-046': 'e-stop on the approval surface, one action; hardware-only shows physical_ref',
  'HOST-047': 'operators see and revoke permits; revoked permits never sent',
  'HOST-050': 'ledger records receipts, sessions, approvals, tool calls, exports, disclosures',
  'HOST-051': 'append-only hash chain with genesis, exportable and verifiable offline',
  'HOST-052': 'receipts stored verbatim in a wrapper',
  'HOST-053': 'verify host and endpoint chains; CHAIN_BROKEN blocks a verified export',
  'HOST-054': 'export package with ledger, endpoint bundles, manifests, transcript, manifest_sha256',
  'HOST-055': 'every export states what is not proven',
  'HOST-056': 'retention, redaction, no secrets in the ledger',
  'HOST-057': 'record enough to reproduce a plan against a replay endpoint',
  'HOST-060': 'no patching of the generic MCP client; connector configuration only',
  'HOST-061': 'ordinary connector rows; ADAPTER_MISSING when the integration is absent',
  'HOST-062': 'projection tool surface; refusals isError false, faults isError true',
  'HOST-063': 'client framing limits matched; no silent truncation or unbounded call',
  'HOST-064': 'model context has endpoint trust, device disclosures and the not-a-safety-channel note',
  'HOST-065': 'capabilities summarised with physical meaning and units',
  'HOST-066': 'connector disabled by default; explicit recorded operator enable',
  'HOST-067': 'enablement visible with experimental status; can be disabled',
  'HOST-068': 'while disabled nothing connects and the model is not told',
  'HOST-069': 'enable/disable applies to every MHS surface and is recorded',
  'HOST-070': 'never reuse a single-use permit',
  'HOST-071': 'never send reset automatically',
  'HOST-072': 'never hide endpoint errors',
  'HOST-073': 'refuse endpoints with invalid manifests, missing CL2+ claims or unrenderable mode/risk',
  'HOST-080': 'several endpoints in one task, sessions never shared',
  'HOST-081': 'parent action with child receipts in the ledger',
  'HOST-082': 'per-endpoint backpressure and isolation',
  'HOST-083': 'publish the conformance report when claiming CL5',
  'HOST-084': 'composition execution (reserved in 0.9)',
  'HOST-085': 'drive an endpoint in replay mode and label it replay',
  // Host side: test/engine/deployment-policy.test.ts, test/policy/deployment-policy.test.ts; projection: test/sim/policy.test.ts.
  'HOST-090':
    'deployment policy (enabled, allow_hardware) applied by the host before any session, and by the projection (--config)',
  'HOST-091': 'durable command_id before dispatch; UNKNOWN gates the device until reconciliation',
  'HOST-092': 'governed-path ledger records every invocation',
  'HOST-093': 'portable package and offline verification; store failures visible',
  'HOST-094': 'trusted e-stop is operator-enabled, allow-listed and recorded as a pair',
};

/** Conformance levels CL1..CL5 (MHS-001). */
export type Level = 1 | 2 | 3 | 4 | 5;

/**
 * Level at which each requirement applies, from the profile's traceability table (§10), taking the lower bound of
 * a range ("CL1–CL2" counts from CL1: conservative). HOST-001…003 (scope) and HOST-090…094 (§8.3, not in the table)
 * count from CL1.
 */
const LEVEL_RANGES: Array<[from: number, to: number, level: Level]> = [
  [1, 3, 1],
  [10, 15, 1],
  [20, 22, 1],
  [30, 33, 1],
  [34, 37, 2],
  [40, 47, 3],
  [50, 57, 4],
  [60, 65, 1],
  [66, 69, 1],
  [70, 73, 2],
  [80, 85, 5],
  [90, 94, 1],
];

/** The level from which `id` (`HOST-0xx`) must hold. */
export function requirementLevel(id: string): Level {
  const n = Number(id.slice(5));
  const hit = LEVEL_RANGES.find(([a, b]) => n >= a && n <= b);
  if (!hit) throw new Error(`no level for ${id}`);
  return hit[2];
}

/** Requirements that are recommendations (SHOULD): reported, never blocking a level. */
export const SHOULD_ONLY: ReadonlySet<string> = new Set(['HOST-057']);

/**
 * Requirements no test exercises, with why. `not_applicable`: the condition that triggers the MUST does not arise in
 * this host; `not_testable`: the host cannot exercise it (never a pass: it blocks its level); `gap`: it applies and
 * is not built (blocks every level it belongs to).
 */
export const NOT_EXERCISED: Record<string, { kind: 'not_applicable' | 'not_testable' | 'gap'; reason: string }> = {
  'HOST-022': { kind: 'not_applicable', reason: 'the host adds no device-family macros (a MAY)' },
  'HOST-060': {
    kind: 'not_applicable',
    reason: 'mhs-host is not an integration patched into another host; it uses the stock MCP client as is',
  },
  // Applies to a CL5 claim. The host runs compositions as an experimental extension (issue 22), but the method has
  // no public wire form: a pass would rest on this project's own form and simulator, so CL5 is not claimed.
  'HOST-084': {
    kind: 'not_testable',
    reason:
      'mhs.composition.run is reserved in OpenMHS 0.9 with no wire form and no 0.9 endpoint implements it (MHS-009 ' +
      'HOST-084), so the host cannot be tested against the method; it runs compositions as an EXPERIMENTAL ' +
      "extension of this project's own form (docs/spec/mhs-wire.md §11), exercised on the host against the bundled " +
      'simulator by test/engine/composition.test.ts and test/gateway/gateway-composition.test.ts, which is not a ' +
      'test against the profile',
  },
};
