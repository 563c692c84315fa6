// Issue 16 (interop): an endpoint whose evidence bodies keep `replayed` (wire §9: the body is the receipt minus
// `evidence` and `replayed`) has an intact chain. Export and offline verification report that as a conformance
// deviation of that endpoint (MHS.EVIDENCE.NONCONFORMING, naming the endpoint, the entry and the rule) and the
// package stays verified; a flipped byte in such a chain is still MHS.EVIDENCE.CHAIN_BROKEN (HOST-053).
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, H, SimulatedClock, jcs, sha256Hex } from '../../src/core/index.js';
import { exportPackage, verifyPackage } from '../../src/ledger/index.js';
import type { PackageManifest } from '../../src/ledger/index.js';
import { ENDPOINT, fillSampleStore, openStore, runCli, tempDir } from './helpers.js';

let root: { dir: string; cleanup: () => void };
let pkg: string;
let exported: Awaited<ReturnType<typeof exportPackage>>;
const EVIDENCE = 'endpoints/mhs___localhost_7400/evidence.jsonl';

beforeAll(async () => {
  root = tempDir('mhs-nonconf-');
  const clock = new SimulatedClock();
  const { db, ledger } = await openStore(join(root.dir, 'host.db'), clock);
  await fillSampleStore(db, clock, ledger, { bodyKeepsReplayed: true });
  pkg = join(root.dir, 'pkg');
  exported = await exportPackage({ db, outDir: pkg, clock, ledger });
  await db.close();
});
afterAll(() => root.cleanup());

describe('an endpoint whose evidence bodies keep replayed (issue 16)', () => {
  it('HOST-053: export marks the package verified and names the deviation (endpoint, entry, wire §9)', () => {
    expect(exported.status).toBe('verified');
    const m = JSON.parse(readFileSync(join(pkg, 'manifest.json'), 'utf8')) as PackageManifest;
    expect(m.verification).toMatchObject({ host_chain: 'ok', endpoint_chains: 'ok', status: 'verified' });
    expect(m.verification.deviations?.map((d) => [d.code, d.endpoint_id, d.seq, d.rule])).toEqual([
      [ErrorCode.EVIDENCE_NONCONFORMING, ENDPOINT, 1, 'wire §9'],
      [ErrorCode.EVIDENCE_NONCONFORMING, ENDPOINT, 2, 'wire §9'],
      [ErrorCode.EVIDENCE_NONCONFORMING, ENDPOINT, 3, 'wire §9'],
    ]);
  });

  it('HOST-053: ledger verify reports an intact chain with a conformance deviation, not CHAIN_BROKEN', async () => {
    const v = await verifyPackage(pkg);
    expect(v.ok).toBe(true);
    expect(v.problems).toEqual([]);
    expect(v.checked.receipts_cross_checked).toBe(3);
    expect(v.deviations[0]).toMatchObject({
      code: ErrorCode.EVIDENCE_NONCONFORMING,
      endpoint_id: ENDPOINT,
      file: EVIDENCE,
      seq: 1,
      rule: 'wire §9',
      reason: 'receipt_body_replayed',
    });
    const cli = await runCli(['ledger', 'verify', pkg, '--json']);
    expect(cli.code).toBe(0);
    const out = JSON.parse(cli.stdout.split('\n')[0] as string) as { ok: boolean; deviations: Array<{ code: string }> };
    expect(out.ok).toBe(true);
    expect(out.deviations.map((d) => d.code)).toEqual(Array(3).fill(ErrorCode.EVIDENCE_NONCONFORMING));
  });

  it('HOST-053: a flipped byte in such a chain is still CHAIN_BROKEN, named by file and seq', async () => {
    const bad = join(root.dir, 'bad');
    cpSync(pkg, bad, { recursive: true });
    const p = join(bad, EVIDENCE);
    writeFileSync(p, readFileSync(p, 'utf8').replace('"position_mm":200', '"position_mm":201'));
    // A careful forger also rewrites the file hashes and manifest_sha256.
    const m = JSON.parse(readFileSync(join(bad, 'manifest.json'), 'utf8')) as PackageManifest;
    m.files = m.files.map((f) => {
      const b = readFileSync(join(bad, f.path));
      return { ...f, size: b.length, sha256: sha256Hex(b) };
    });
    const { manifest_sha256: _x, ...rest } = m;
    writeFileSync(join(bad, 'manifest.json'), jcs({ ...rest, manifest_sha256: H(rest) }));
    const v = await verifyPackage(bad);
    expect(v.ok).toBe(false);
    expect(v.code).toBe(ErrorCode.EVIDENCE_CHAIN_BROKEN);
    expect(v.first).toMatchObject({ file: EVIDENCE, seq: 2, reason: 'digest' });
  });
});
