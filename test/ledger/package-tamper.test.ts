// Export package and offline verification (HOST-051, 053…055): a clean package of a store holding
// every artifact kind verifies in a separate `mhs-host ledger verify` process; a single flipped byte
// anywhere in any file kind is always detected (fast-check); a forger who also rewrites the file
// hashes and manifest_sha256 is still caught by the chain, named with MHS.EVIDENCE.CHAIN_BROKEN,
// the file and the seq; unlisted files and misnamed manifests are rejected.
import { cpSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, H, SimulatedClock, jcs, seal, sha256Hex } from '../../src/core/index.js';
import { exportPackage, verifyPackage } from '../../src/ledger/index.js';
import type { PackageManifest } from '../../src/ledger/index.js';
import { fillSampleStore, openStore, runCli, tempDir } from './helpers.js';

let root: { dir: string; cleanup: () => void };
let pristine: string;
let fileNames: string[];

function listAll(dir: string, rel = ''): string[] {
  return readdirSync(join(dir, rel)).flatMap((n) => {
    const p = rel ? `${rel}/${n}` : n;
    return statSync(join(dir, p)).isDirectory() ? listAll(dir, p) : [p];
  });
}

/** A writable copy of the clean package. */
function copy(name: string): string {
  const d = join(root.dir, name);
  cpSync(pristine, d, { recursive: true });
  return d;
}

/** Rewrites manifest.json so that every file hash and manifest_sha256 are consistent again (a careful forger). */
function reseal(dir: string): void {
  const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as PackageManifest;
  m.files = listAll(dir)
    .filter((p) => p !== 'manifest.json')
    .sort()
    .map((p) => {
      const b = readFileSync(join(dir, p));
      return { path: p, size: b.length, sha256: sha256Hex(b) };
    });
  const { manifest_sha256: _x, ...rest } = m;
  writeFileSync(join(dir, 'manifest.json'), jcs({ ...rest, manifest_sha256: H(rest) }));
}

beforeAll(async () => {
  root = tempDir('mhs-pkg-');
  const clock = new SimulatedClock();
  const { db, ledger } = await openStore(join(root.dir, 'host.db'), clock);
  await fillSampleStore(db, clock, ledger);
  pristine = join(root.dir, 'pristine');
  const r = await exportPackage({ db, outDir: pristine, clock, ledger });
  expect(r.status).toBe('verified');
  await db.close();
  fileNames = listAll(pristine).sort();
});

afterAll(() => root.cleanup());

describe('export package', () => {
  it('HOST-054 HOST-055: writes exactly the layout of export-package.md and states what is not proven', () => {
    const kinds = fileNames.map((p) => p.replace(/[0-9a-f]{64}/, '<digest>'));
    expect(kinds).toEqual([
      'README.txt',
      'endpoints/mhs___localhost_7400/evidence.jsonl',
      'ledger.jsonl',
      'manifest.json',
      'manifests/<digest>.json',
      'transcript.jsonl',
    ]);
    const m = JSON.parse(readFileSync(join(pristine, 'manifest.json'), 'utf8')) as PackageManifest;
    expect(m).toMatchObject({
      format: 'mhs-host.evidence-package',
      schema_version: 1,
      ledger: { path: 'ledger.jsonl', first_seq: 0 },
      verification: { host_chain: 'ok', endpoint_chains: 'ok', status: 'verified' },
    });
    // HOST-055: what is not proven is stated in the manifest and the README.
    expect(m.not_proven).toEqual(
      expect.arrayContaining([
        'that any endpoint was honest',
        'that any device was safe',
        'that any experiment succeeded',
      ]),
    );
    // Issue 20: what the package's own cross-checks still leave open is said too.
    expect(m.not_proven.some((s) => s.includes('re-sealed from scratch') && s.includes('anchor'))).toBe(true);
    expect(m.not_proven.some((s) => s.includes('messages'))).toBe(true);
    const readme = readFileSync(join(pristine, 'README.txt'), 'utf8');
    for (const s of m.not_proven) expect(readme).toContain(s);
    expect(m.files.map((f) => f.path)).toEqual(fileNames.filter((p) => p !== 'manifest.json'));
    const lines = readFileSync(join(pristine, 'ledger.jsonl'), 'utf8').trimEnd().split('\n');
    expect(lines.length).toBe(m.ledger.head_seq + 1);
    for (const l of lines) expect(jcs(JSON.parse(l))).toBe(l);
  });

  it('HOST-053: a clean package verifies in a separate process; a tampered one exits non-zero with the code', async () => {
    const bad = copy('cli-bad');
    const p = join(bad, 'ledger.jsonl');
    writeFileSync(p, readFileSync(p, 'utf8').replace('"ses_1"', '"ses_2"'));
    const [ok, r] = await Promise.all([
      runCli(['ledger', 'verify', pristine]),
      runCli(['ledger', 'verify', bad, '--json']),
    ]);
    expect(ok.code).toBe(0);
    expect(r.code).not.toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: false,
      code: ErrorCode.EVIDENCE_CHAIN_BROKEN,
      first: { file: 'ledger.jsonl', seq: 1 },
    });
    expect(r.stderr).toContain(ErrorCode.EVIDENCE_CHAIN_BROKEN);
  }, 120_000);

  it('HOST-053: every single-byte flip in every file kind is detected', async () => {
    const dir = copy('flip');
    for (const name of fileNames) {
      const path = join(dir, name);
      const original = readFileSync(path);
      await fc.assert(
        fc.asyncProperty(fc.nat({ max: original.length - 1 }), fc.integer({ min: 1, max: 255 }), async (pos, mask) => {
          const flipped = Buffer.from(original);
          flipped[pos] = (flipped[pos] as number) ^ mask;
          writeFileSync(path, flipped);
          try {
            const v = await verifyPackage(dir);
            expect(v.ok).toBe(false);
            expect(v.code).toBe(ErrorCode.EVIDENCE_CHAIN_BROKEN);
          } finally {
            writeFileSync(path, original);
          }
        }),
        { numRuns: 60 },
      );
    }
    expect((await verifyPackage(dir)).ok).toBe(true);
    // 60 flips per file kind, each a whole package verify: minutes on a loaded 2-core machine.
  }, 120_000);

  it('HOST-053: a forged ledger entry with resealed hashes is named by file and seq', async () => {
    const dir = copy('forge-ledger');
    const p = join(dir, 'ledger.jsonl');
    const lines = readFileSync(p, 'utf8').trimEnd().split('\n');
    const e = JSON.parse(lines[3] as string) as Record<string, unknown>;
    lines[3] = jcs({ ...e, command_id: 'cmd_forged' });
    writeFileSync(p, `${lines.join('\n')}\n`);
    reseal(dir);
    const v = await verifyPackage(dir);
    expect(v.first).toMatchObject({
      code: ErrorCode.EVIDENCE_CHAIN_BROKEN,
      file: 'ledger.jsonl',
      seq: 3,
      reason: 'digest',
    });
  });

  it('HOST-053: a rewritten endpoint chain (even re-linked) fails the head and the receipt cross-check', async () => {
    const dir = copy('forge-endpoint');
    const p = join(dir, 'endpoints/mhs___localhost_7400/evidence.jsonl');
    const entries = readFileSync(p, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown> & { digest: string; body: Record<string, unknown> });
    // Change receipt 2's output and relink the rest of the chain so every link recomputes.
    const out: Record<string, unknown>[] = [entries[0] as Record<string, unknown>];
    for (let i = 1; i < entries.length; i++) {
      const { digest: _d, ...e } = entries[i] as Record<string, unknown> & { body: Record<string, unknown> };
      if (i === 2) e.body = { ...e.body, output: { position_mm: 9999 } };
      out.push(seal({ ...e, prev_digest: (out[i - 1] as { digest: string }).digest }));
    }
    writeFileSync(p, out.map((e) => `${jcs(e)}\n`).join(''));
    reseal(dir);
    const v = await verifyPackage(dir);
    expect(v.ok).toBe(false);
    expect(v.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ file: 'endpoints/mhs___localhost_7400/evidence.jsonl', reason: 'head' }),
      ]),
    );
    // A single re-linked entry in the middle is named by seq.
    const dir2 = copy('forge-endpoint-2');
    const p2 = join(dir2, 'endpoints/mhs___localhost_7400/evidence.jsonl');
    const e2 = {
      ...(entries[2] as Record<string, unknown>),
      body: { ...(entries[2] as { body: object }).body, status: 'failed' },
    };
    const lines2 = entries.map((e) => jcs(e));
    lines2[2] = jcs(e2);
    writeFileSync(p2, lines2.map((l) => `${l}\n`).join(''));
    reseal(dir2);
    expect((await verifyPackage(dir2)).first).toMatchObject({
      code: ErrorCode.EVIDENCE_CHAIN_BROKEN,
      file: 'endpoints/mhs___localhost_7400/evidence.jsonl',
      seq: 2,
    });
  });

  it('HOST-053: an endpoint entry that lost its body is reported, not a crash of the verifier', async () => {
    // Found by the byte-flip property: a flip inside the key "body" left the receipt cross-check comparing
    // against nothing, and the verifier threw instead of naming the break.
    const dir = copy('no-body');
    const p = join(dir, 'endpoints/mhs___localhost_7400/evidence.jsonl');
    const lines = readFileSync(p, 'utf8').trimEnd().split('\n');
    lines[2] = (lines[2] as string).replace('"body":', '"bodz":');
    writeFileSync(p, lines.map((l) => `${l}\n`).join(''));
    const v = await verifyPackage(dir);
    expect(v.ok).toBe(false);
    expect(v.code).toBe(ErrorCode.EVIDENCE_CHAIN_BROKEN);
    expect(v.problems).toEqual(expect.arrayContaining([expect.objectContaining({ reason: 'cross_check' })]));
  });

  it('HOST-054: rejects an unlisted file and a manifest whose digest differs from its file name', async () => {
    const dir = copy('unlisted');
    writeFileSync(join(dir, 'extra.txt'), 'hello');
    expect((await verifyPackage(dir)).first).toMatchObject({ file: 'extra.txt', reason: 'unlisted' });

    const dir2 = copy('renamed');
    const m = fileNames.find((f) => f.startsWith('manifests/')) as string;
    const other = `manifests/${'a'.repeat(64)}.json`;
    renameSync(join(dir2, m), join(dir2, other));
    const man = JSON.parse(readFileSync(join(dir2, 'manifest.json'), 'utf8')) as PackageManifest;
    man.manifests = ['a'.repeat(64)];
    writeFileSync(join(dir2, 'manifest.json'), jcs(man));
    reseal(dir2);
    const v = await verifyPackage(dir2);
    expect(v.problems).toEqual(
      expect.arrayContaining([expect.objectContaining({ file: other, reason: 'manifest_digest' })]),
    );
  });

  it('issue 21: a package whose endpoint bundle is gone verifies its chains but is partial: exit 3 with MHS.EVIDENCE.PARTIAL', async () => {
    const v0 = await verifyPackage(pristine);
    expect(v0).toMatchObject({ ok: true, status: 'verified' });
    expect(v0.coverage?.receipts).toBeGreaterThan(0);
    expect(v0.coverage).toMatchObject({
      receipts_cross_checked: v0.coverage?.receipts,
      receipts_unchecked: 0,
      endpoints_without_bundle: [],
    });

    // A consistent package (every hash resealed) that no longer holds the endpoint's evidence.
    const dir = copy('no-bundle');
    const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as PackageManifest;
    const [ep] = m.endpoints;
    rmSync(join(dir, ep!.path));
    rmSync(join(dir, 'endpoints'), { recursive: true });
    m.endpoints = [];
    writeFileSync(join(dir, 'manifest.json'), jcs(m));
    reseal(dir);
    const v = await verifyPackage(dir);
    expect(v).toMatchObject({ ok: true, status: 'partial', problems: [] });
    expect(v.coverage).toMatchObject({
      receipts: v0.coverage?.receipts,
      receipts_cross_checked: 0,
      receipts_unchecked: v0.coverage?.receipts,
      endpoints_without_bundle: [ep!.endpoint_id],
    });

    const broken = copy('broken-status');
    const lp = join(broken, 'ledger.jsonl');
    writeFileSync(lp, readFileSync(lp, 'utf8').replace('"ses_1"', '"ses_2"'));
    expect((await verifyPackage(broken)).status).toBe('broken');

    const [ok, partial, json] = await Promise.all([
      runCli(['ledger', 'verify', pristine]),
      runCli(['ledger', 'verify', dir]),
      runCli(['ledger', 'verify', dir, '--json']),
    ]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^ok: /);
    expect(partial.code).toBe(3);
    expect(partial.stdout).toMatch(new RegExp(`^partial ${ErrorCode.EVIDENCE_PARTIAL.replace(/\./g, '\\.')}: `));
    expect(partial.stdout).toContain(`no evidence bundle for endpoint(s) ${ep!.endpoint_id}`);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, status: 'partial' });
  }, 120_000);
});
