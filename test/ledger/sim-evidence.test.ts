// The export carries real endpoint evidence (HOST-051, 053, 054): receipts, the manifest and the
// evidence bundle of a reference simulator (src/sim, in-process) go into the store; the package
// verifies offline and every host receipt cross-checks against the endpoint's chain. A simulator
// started with a corrupted evidence link (fault --corrupt-evidence) yields an "unverified" package
// naming the endpoint file and seq.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, SimulatedClock } from '../../src/core/index.js';
import {
  exportPackage,
  openArtifacts,
  openLedger,
  openDb,
  receiptEntry,
  verifyPackage,
} from '../../src/ledger/index.js';
import { SimEndpoint } from '../../src/sim/endpoint.js';
import { parseFamily } from '../../src/sim/family.js';
import { ToolTable } from '../../src/sim/tools.js';
import { STIRRER } from '../sim/fixtures.js';
import { recordEvidenceExport, recordToolCall, tempDir } from './helpers.js';

const ctx = { connectionKey: 'ledger-test' };
const TOOL = 'mhs__cap__stirrer__cap_stir_speed_v1';
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function sessionWithReceipts(corruptEvidence?: number) {
  const clock = new SimulatedClock();
  const ep = new SimEndpoint({
    families: [parseFamily(structuredClone(STIRRER), 'ledger-test')],
    endpointId: 'mhs://ledger-test:7401',
    clock,
    seed: 1,
    operatorTools: false,
    policy: null,
    faults: corruptEvidence === undefined ? {} : { corruptEvidence },
    transports: [],
  });
  const table = new ToolTable(ep);
  const t = tempDir();
  cleanups.push(t.cleanup);
  const db = await openDb(join(t.dir, 'host.db'));
  const ledger = await openLedger(db, { clock });
  const artifacts = await openArtifacts(db, { clock });
  const manifest = (await table.call('mhs__inspect', {}, ctx)).body as Record<string, unknown>;
  await artifacts.putManifest(manifest);
  const s = await table.call('mhs__session', { action: 'open', device_id: 'stirrer', ttl_ms: 600_000 }, ctx);
  const sid = s.body['session_id'] as string;
  await ledger.append({
    kind: 'session.open',
    session_id: sid,
    endpoint_id: manifest['endpoint_id'],
    manifest_digest: manifest['manifest_digest'],
  });
  for (const rpm of [5, 7, 9]) {
    await ledger.append({ kind: 'command.intent', command_id: `cmd_${rpm}`, session_id: sid });
    const p = table.call(TOOL, { rpm, _mhs: { session_id: sid, command_id: `cmd_${rpm}` } }, ctx);
    clock.advance(100);
    const r = await p;
    expect(r.isError).toBe(false);
    await ledger.append(receiptEntry(r.body, { received_at: '2026-01-01T00:00:00.000Z' }));
    await recordToolCall(ledger, artifacts, {
      session: sid,
      callId: `call_${rpm}`,
      tool: TOOL,
      input: { rpm },
      result: r.body,
    });
  }
  const bundle = (await table.call('mhs__evidence', { action: 'export' }, ctx)).body;
  await artifacts.putEvidenceBundle(bundle);
  await recordEvidenceExport(ledger, bundle as unknown as Parameters<typeof recordEvidenceExport>[1]);
  return { db, ledger, clock, dir: t.dir };
}

describe('export with simulator evidence', () => {
  it('HOST-053: receipts, manifest and evidence of a real simulator verify and cross-check', async () => {
    const { db, ledger, clock, dir } = await sessionWithReceipts();
    const r = await exportPackage({ db, outDir: join(dir, 'pkg'), clock, ledger });
    expect(r).toMatchObject({ status: 'verified', missing_manifests: [] });
    const v = await verifyPackage(join(dir, 'pkg'));
    expect(v).toMatchObject({
      ok: true,
      checked: { receipts_cross_checked: 3, receipts_not_in_bundle: 0, manifests: 1 },
    });
    await db.close();
  });

  it('HOST-053: a simulator with a corrupted evidence link yields an unverified package naming it', async () => {
    const { db, clock, dir } = await sessionWithReceipts(2);
    const r = await exportPackage({ db, outDir: join(dir, 'pkg'), clock });
    expect(r.status).toBe('unverified');
    expect(r.break).toMatchObject({
      code: ErrorCode.EVIDENCE_CHAIN_BROKEN,
      file: 'endpoints/mhs___ledger-test_7401/evidence.jsonl',
      seq: 2,
    });
    const v = await verifyPackage(join(dir, 'pkg'));
    expect(v.first).toMatchObject({
      code: ErrorCode.EVIDENCE_CHAIN_BROKEN,
      file: 'endpoints/mhs___ledger-test_7401/evidence.jsonl',
      seq: 2,
    });
    await db.close();
  });
});
