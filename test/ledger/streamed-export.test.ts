// Guarantees (issue 21 item 7, HOST-051, 053): `ledger.jsonl` of a package is written from the store page by page
// and read back by the verifier as a stream of 1 MiB chunks, line by line (src/ledger/ledger-stream.ts): a ledger
// of several pages and chunks exports byte for byte as the stored canonical lines and verifies; in that streamed
// form a flipped byte, a truncation (whole lines or mid-line) and two reordered lines are each caught, even when a
// careful forger re-seals the file hashes and manifest_sha256, named MHS.EVIDENCE.CHAIN_BROKEN with file and seq.
import { cpSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { H, SimulatedClock, jcs, sha256Hex } from '../../src/core/index.js';
import { exportPackage, verifyPackage } from '../../src/ledger/index.js';
import type { PackageManifest } from '../../src/ledger/index.js';
import { fillSampleStore, openStore, tempDir } from './helpers.js';

const FILLER = 12_000; // > 2 export pages of 5,000 rows, > 2 MiB: several read chunks
let root: { dir: string; cleanup: () => void };
let pristine: string;
let stored: string[];

function listAll(dir: string, rel = ''): string[] {
  return readdirSync(join(dir, rel)).flatMap((n) => {
    const p = rel ? `${rel}/${n}` : n;
    return statSync(join(dir, p)).isDirectory() ? listAll(dir, p) : [p];
  });
}

/** A copy of the clean package whose ledger lines are edited by `edit`, with file hashes re-sealed when asked. */
function tampered(name: string, edit: (lines: string[]) => string, reseal = true): string {
  const d = join(root.dir, name);
  cpSync(pristine, d, { recursive: true });
  const p = join(d, 'ledger.jsonl');
  writeFileSync(p, edit(readFileSync(p, 'utf8').slice(0, -1).split('\n')));
  if (!reseal) return d;
  const m = JSON.parse(readFileSync(join(d, 'manifest.json'), 'utf8')) as PackageManifest;
  m.files = listAll(d)
    .filter((f) => f !== 'manifest.json')
    .sort()
    .map((f) => {
      const b = readFileSync(join(d, f));
      return { path: f, size: b.length, sha256: sha256Hex(b) };
    });
  const { manifest_sha256: _x, ...rest } = m;
  writeFileSync(join(d, 'manifest.json'), jcs({ ...rest, manifest_sha256: H(rest) }));
  return d;
}

const seqOf = (line: string): number => (JSON.parse(line) as { seq: number }).seq;

beforeAll(async () => {
  root = tempDir('mhs-stream-');
  const clock = new SimulatedClock();
  const { db, ledger } = await openStore(join(root.dir, 'host.db'), clock);
  await fillSampleStore(db, clock, ledger);
  for (let i = 0; i < FILLER; i += 500)
    await ledger.appendBatch(
      Array.from({ length: 500 }, (_, k) => ({
        kind: 'session.heartbeat',
        session_id: 'ses_1',
        n: i + k,
        // A nested member named like the entry's own digest: the link over stored bytes must skip it.
        probe: { digest: sha256Hex(String(i + k)), note: 'é ✓ "quoted"' },
      })),
    );
  stored = (await db.all<{ line: string }>('SELECT line FROM ledger_entries ORDER BY seq')).map((r) => r.line);
  pristine = join(root.dir, 'pristine');
  const r = await exportPackage({ db, outDir: pristine, clock, ledger });
  expect(r.status).toBe('verified');
  await db.close();
}, 120_000);

afterAll(() => root.cleanup());

describe('streamed ledger.jsonl', () => {
  it('is the stored canonical lines byte for byte, listed with its size and sha256, and verifies', async () => {
    const bytes = readFileSync(join(pristine, 'ledger.jsonl'));
    expect(bytes.length).toBeGreaterThan(2 * 1024 * 1024);
    expect(bytes.toString('utf8')).toBe(stored.map((l) => `${l}\n`).join(''));
    const m = JSON.parse(readFileSync(join(pristine, 'manifest.json'), 'utf8')) as PackageManifest;
    expect(m.files.find((f) => f.path === 'ledger.jsonl')).toEqual({
      path: 'ledger.jsonl',
      size: bytes.length,
      sha256: sha256Hex(bytes),
    });
    expect(m.ledger.head_seq).toBe(stored.length - 1);
    const v = await verifyPackage(pristine);
    expect(v.problems).toEqual([]);
    expect(v.checked.ledger_entries).toBe(stored.length);
    expect(v.checked.receipts_cross_checked).toBe(3);
  });

  it('a flipped byte in a later page is caught at its seq (file hash first, the chain when re-sealed)', async () => {
    const at = 7_321;
    const flip = (lines: string[]) =>
      lines
        .map((l, i) => (i === at ? l.replace(/"n":(\d+)/, (_m, n: string) => `"n":${Number(n) + 1}`) : l))
        .join('\n') + '\n';
    const plain = await verifyPackage(tampered('flip', flip, false));
    expect(plain.problems).toContainEqual(expect.objectContaining({ file: 'ledger.jsonl', reason: 'sha256' }));
    const v = await verifyPackage(tampered('flip-resealed', flip));
    expect(v).toMatchObject({
      ok: false,
      code: 'MHS.EVIDENCE.CHAIN_BROKEN',
      first: { file: 'ledger.jsonl', seq: seqOf(stored[at]!), reason: 'digest' },
    });
  });

  it('a truncation is caught: whole lines cut (the head no longer matches), or a line cut short', async () => {
    const cut = await verifyPackage(tampered('cut', (lines) => lines.slice(0, -100).join('\n') + '\n'));
    expect(cut.ok).toBe(false);
    expect(cut.first).toMatchObject({ file: 'ledger.jsonl', reason: 'head' });
    const short = await verifyPackage(tampered('short', (lines) => lines.join('\n').slice(0, -10)));
    expect(short.ok).toBe(false);
    expect(short.problems).toContainEqual(
      expect.objectContaining({ file: 'ledger.jsonl', reason: 'not_canonical', detail: 'missing final newline' }),
    );
  });

  it('two reordered lines are caught at the first one out of place', async () => {
    const at = 9_000;
    const v = await verifyPackage(
      tampered('reorder', (lines) => {
        const out = [...lines];
        [out[at], out[at + 1]] = [out[at + 1]!, out[at]!];
        return out.join('\n') + '\n';
      }),
    );
    expect(v).toMatchObject({
      ok: false,
      first: { file: 'ledger.jsonl', seq: seqOf(stored[at + 1]!), reason: 'seq' },
    });
  });
});
