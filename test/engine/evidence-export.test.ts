// Guarantees (HOST-050, 051, 054, 056, 093): attaching an endpoint records a `disclosure` entry with its manifest
// digest and per-device mode/risk/determinism/fidelity, stores the manifest and applies its redaction paths; after
// a real two-simulator task records its receipts' evidence links, and collecting (once, before the export; issue 21)
// stores each endpoint's `mhs__evidence` bundle and records `evidence.export`;
// the exported package verifies offline with both endpoint chains whose heads equal what the endpoints returned;
// a ledger failure after a command's intent is surfaced (error details + onBackgroundError), never dropped.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ErrorCode, H, HostError, RealClock } from '../../src/core/index.js';
import type { CollectedEvidence, Engine, TaskResult } from '../../src/engine/index.js';
import { exportPackage, verifyPackage } from '../../src/ledger/index.js';
import type { Ledger, LedgerEntry } from '../../src/ledger/index.js';
import { openArtifacts } from '../../src/ledger/artifacts.js';
import type { Artifacts } from '../../src/ledger/artifacts.js';
import { REDACTED } from '../../src/ledger/redaction.js';
import { presentEndpoint } from '../../src/mhs/presentation.js';
import type { EvidenceBundle, Manifest } from '../../src/mhs/wire-types.js';
import { connectStdio, openStore, startEngine } from './harness.js';
import type { Store } from './harness.js';

const THERMO = 'mhs://test/ev-thermostat';
const BELT = 'mhs://test/ev-conveyor';
const clock = new RealClock();
let store: Store;
let artifacts: Artifacts;
let engine: Engine;
const background: HostError[] = [];
const manifests = new Map<string, Manifest>();
let task: TaskResult;
let outDir: string;

beforeAll(async () => {
  store = await openStore();
  artifacts = await openArtifacts(store.db, { clock });
  engine = await startEngine(store, { artifacts, onBackgroundError: (e) => background.push(e) });
  const conns = await Promise.all([
    connectStdio('thermostat', ['--endpoint-id', THERMO, '--time-scale', '20'], 'mhs-ev-thermo'),
    connectStdio('conveyor', ['--endpoint-id', BELT], 'mhs-ev-belt'),
  ]);
  for (const c of conns) {
    manifests.set(c.manifest.endpoint_id, c.manifest);
    await engine.attach(c);
  }
  task = await engine.runTask({
    name: 'evidence export',
    steps: [
      { endpoint: BELT, device: 'conveyor-workcell', capability: 'cap.world.step.v1', input: { ticks: 2 } },
      {
        endpoint: THERMO,
        device: 'thermostat',
        capability: 'cap.thermal.setpoint.v1',
        input: { setpoint_c: 30, operator_note: 'call Bob at home' },
      },
      { endpoint: THERMO, device: 'thermostat', capability: 'cap.thermal.read.v1', input: {} },
    ],
  });
  outDir = join(mkdtempSync(join(tmpdir(), 'mhs-ev-out-')), 'pkg');
});
afterAll(async () => {
  await engine?.stop();
  await store?.close();
  if (outDir) rmSync(join(outDir, '..'), { recursive: true, force: true });
});

const entriesOf = async (kind: string): Promise<LedgerEntry[]> =>
  (await store.ledger.range(0)).filter((e) => e.kind === kind);

describe('endpoint disclosure and evidence export', () => {
  test('HOST-050: one disclosure entry per attached endpoint carries the manifest digest and device disclosures', async () => {
    expect(task.ok).toBe(true);
    const disclosures = await entriesOf('disclosure');
    expect(disclosures.map((d) => d.endpoint_id).sort()).toEqual([BELT, THERMO].sort());
    for (const d of disclosures) {
      const m = manifests.get(d.endpoint_id as string)!;
      expect(d.manifest_digest).toBe(m.manifest_digest);
      expect(d.presentation_digest).toBe(H(presentEndpoint(m)));
      expect(d.devices).toEqual(
        m.devices.map((dev) => ({
          device_id: dev.device_id,
          instance_id: dev.instance_id,
          mode: dev.mode,
          risk_class: dev.risk_class,
          determinism_kind: dev.determinism.kind,
          fidelity_gaps: dev.fidelity?.gaps ?? [],
        })),
      );
      // The disclosure comes before any command of that endpoint.
      const first = (await store.ledger.range(0)).find(
        (e) => e.kind === 'command.intent' && e.endpoint_id === d.endpoint_id,
      );
      expect(first!.seq).toBeGreaterThan(d.seq);
      // HOST-054: the manifest the disclosure names is stored for the export.
      expect(await artifacts.getManifest(m.manifest_digest)).toBeDefined();
    }
  });

  test("HOST-056: the manifest's redaction paths apply to that endpoint's ledger entries", async () => {
    const paths = manifests.get(THERMO)!.redaction.paths;
    expect(paths).toContain('/input/operator_note');
    const intent = (await entriesOf('command.intent')).find((e) => e.capability_id === 'cap.thermal.setpoint.v1');
    expect(intent?.input).toEqual({ setpoint_c: 30, operator_note: REDACTED });
  });

  test('HOST-051 HOST-054: collected once before the export, each endpoint bundle is stored; the package verifies with both endpoint chains', async () => {
    expect(background).toEqual([]);
    // Issue 21: the task itself exported nothing; it holds its receipts' links, one endpoint each.
    expect(await artifacts.latestEvidenceBundles()).toEqual([]);
    expect((task.evidence ?? []).map((e) => e.endpointId).sort()).toEqual([BELT, THERMO].sort());
    const collected = (await engine.collectPendingEvidence()).filter((e): e is CollectedEvidence => !('error' in e));
    expect(collected.map((e) => e.endpointId).sort()).toEqual([BELT, THERMO].sort());
    const recorded = (await entriesOf('evidence.export')).filter((e) => e.source === 'endpoint');
    // The heads equal what `mhs__evidence export` returns from the endpoint itself.
    const heads = new Map<string, string>();
    for (const id of [BELT, THERMO]) {
      const r = await engine.endpoint(id)!.callTool('mhs__evidence', { action: 'export' }, { timeoutMs: 10_000 });
      const bundle = r.structuredContent as unknown as EvidenceBundle;
      heads.set(id, bundle.head_digest);
      const c = collected.find((e) => e.endpointId === id)!;
      expect(c.headDigest).toBe(bundle.head_digest);
      expect(c.entries).toBe(bundle.entries.length);
      expect(bundle.entries.some((e) => e.kind === 'receipt')).toBe(true);
      expect(recorded.find((e) => e.endpoint_id === id)).toMatchObject({
        head_digest: bundle.head_digest,
        entries: bundle.entries.length,
        manifest_digest: manifests.get(id)!.manifest_digest,
      });
    }

    const ex = await exportPackage({ db: store.db, outDir, clock, ledger: store.ledger });
    expect(ex.status).toBe('verified');
    expect(ex.missing_manifests).toEqual([]);
    expect(new Map(ex.manifest.endpoints.map((e) => [e.endpoint_id, e.head_digest]))).toEqual(heads);
    const check = await verifyPackage(outDir);
    expect(check.problems).toEqual([]);
    expect(check.ok).toBe(true);
    // Every host receipt is cross-checked against its endpoint's exported chain.
    expect(check.checked.receipts_cross_checked).toBe(task.steps.length);
    expect(check.checked.receipts_not_in_bundle).toBe(0);
  });

  test('HOST-050: collectEvidence on an unknown endpoint is refused with MHS.HOST.ENDPOINT_UNKNOWN', async () => {
    await expect(engine.collectEvidence('mhs://test/nowhere')).rejects.toMatchObject({
      code: ErrorCode.HOST_ENDPOINT_UNKNOWN,
    });
  });
});

describe('ledger failures after the intent', () => {
  let failStore: Store;
  let failEngine: Engine;
  const reported: HostError[] = [];

  beforeAll(async () => {
    failStore = await openStore();
    // The real ledger, except that `command.unknown` appends fail as an unavailable store would.
    const real = failStore.ledger;
    const failing = new Proxy(real, {
      get(t, k) {
        if (k === 'append')
          return (e: Parameters<Ledger['append']>[0]) =>
            e.kind === 'command.unknown'
              ? Promise.reject(new HostError(ErrorCode.HOST_LEDGER_UNAVAILABLE, 'store unavailable', {}))
              : t.append(e);
        const v = Reflect.get(t, k) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
      },
    });
    failEngine = await startEngine(
      { ...failStore, ledger: failing },
      { transportMarginMs: 300, onBackgroundError: (e) => reported.push(e) },
    );
    await failEngine.attach(await connectStdio('conveyor', ['--stall', '--endpoint-id', 'mhs://test/ev-stalled']));
  });
  afterAll(async () => {
    await failEngine?.stop();
    await failStore?.close();
  });

  test('HOST-093: a failed command.unknown append is surfaced in the error and to onBackgroundError', async () => {
    const err = await failEngine
      .invoke({
        endpointId: 'mhs://test/ev-stalled',
        deviceId: 'conveyor-workcell',
        capabilityId: 'cap.world.step.v1',
        input: { ticks: 1 },
        deadlineMs: 500,
      })
      .catch((e: unknown) => e as HostError);
    // The physical outcome stays unknown (HOST-091); the lost ledger write is reported, not swallowed.
    expect(err).toBeInstanceOf(HostError);
    expect((err as HostError).code).toBe(ErrorCode.OUTCOME_UNKNOWN);
    expect((err as HostError).details.ledger_error).toMatchObject({ mhs_code: ErrorCode.HOST_LEDGER_UNAVAILABLE });
    expect(reported.map((e) => e.code)).toContain(ErrorCode.HOST_LEDGER_UNAVAILABLE);
    expect(failEngine.pending().map((p) => p.commandId)).toContain((err as HostError).details.command_id);
  });
});
