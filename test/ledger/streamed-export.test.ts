// Guarantees (issue 21 item 7, HOST-051, 053): `ledger.jsonl` of a package is written from the store page by page
// and read back by the verifier as a stream of 1 MiB chunks, line by line (src/ledger/ledger-stream.ts): a ledger
// of several pages and chunks exports byte for byte as the stored canonical lines and verifies; in that streamed
// form a flipped byte, a truncation (whole lines or mid-line) and two reordered lines are each caught, even when a
// careful forger re-seals the file hashes and manifest_sha256, named MHS.EVIDENCE.CHAIN_BROKEN with file and seq.
// Issue 21 item 3: bytes that are not UTF-8 (an invalid sequence, an encoded surrogate) in a later chunk and a byte
// order mark are caught now that chunks are checked with `isUtf8` rather than a fatal TextDecoder, and a digest that
// is not hex is named `malformed` whatever else fails, now that its form is tested only once a check fails.
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
function tampered(name: string, edit: (lines: string[], bytes: Buffer) => string | Buffer, reseal = true): string {
  const d = join(root.dir, name);
  cpSync(pristine, d, { recursive: true });
  const p = join(d, 'ledger.jsonl');
  const bytes = readFileSync(p);
  writeFileSync(p, edit(bytes.toString('utf8').slice(0, -1).split('\n'), bytes));
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

  it('bytes that are not UTF-8 in a later chunk, and a byte order mark, are caught even when re-sealed', async () => {
    const at = 9_500;
    // Each filler line holds "é" (C3 A9): its second byte replaced by an invalid one, or by an encoded surrogate.
    const recode = (bad: number[]) => (lines: string[]) => {
      const before = Buffer.from(lines.slice(0, at).join('\n') + '\n', 'utf8');
      const line = Buffer.from(lines[at]!, 'utf8');
      const e = line.indexOf(Buffer.from('é', 'utf8'));
      expect(e).toBeGreaterThan(0);
      const rest = Buffer.from('\n' + lines.slice(at + 1).join('\n') + '\n', 'utf8');
      return Buffer.concat([before, line.subarray(0, e), Buffer.from(bad), line.subarray(e + 2), rest]);
    };
    for (const [name, bad] of [
      ['invalid', [0xc3, 0x28]],
      ['surrogate', [0xed, 0xa0, 0x80]],
      ['overlong', [0xc0, 0xaf]],
    ] as const) {
      const v = await verifyPackage(tampered(`utf8-${name}`, recode([...bad])));
      expect(v.ok).toBe(false);
      expect(v.problems).toContainEqual(expect.objectContaining({ file: 'ledger.jsonl', reason: 'not_utf8' }));
    }
    const bom = await verifyPackage(
      tampered('bom', (_lines, bytes) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes])),
    );
    expect(bom.ok).toBe(false);
    expect(bom.first).toMatchObject({ file: 'ledger.jsonl', reason: 'malformed', detail: 'line 1' });
  });

  it('a digest that is not hex is malformed, also when its seq is wrong too', async () => {
    const at = 8_000;
    const seq = seqOf(stored[at]!);
    const edit = (wrongSeq: boolean) => (lines: string[]) =>
      lines
        .map((l, i) =>
          i !== at
            ? l
            : l
                .replace(/"digest":"[0-9a-f]{64}"/, `"digest":"${'z'.repeat(64)}"`)
                .replace(`"seq":${seq},`, wrongSeq ? `"seq":${seq + 7},` : `"seq":${seq},`),
        )
        .join('\n') + '\n';
    for (const wrongSeq of [false, true]) {
      const v = await verifyPackage(tampered(`nonhex-${String(wrongSeq)}`, edit(wrongSeq)));
      expect(v).toMatchObject({
        ok: false,
        first: { file: 'ledger.jsonl', seq: wrongSeq ? seq + 7 : seq, reason: 'malformed' },
      });
    }
  });
});
