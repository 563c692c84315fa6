// Issue 20 item 3: forgeries whose author re-seals every chain and hash. Truncation, dropped receipts, transcript
// edits, reordered and appended entries are each caught by the endpoint ↔ host cross-check, the transcript
// binding, or a head the reviewer kept (an anchor): by verifyPackage, by `mhs-host ledger verify` in its own
// process, and by a checker written from docs/ledger.md alone (no import of the verifier).
import { createHash, generateKeyPairSync, verify as edVerify } from 'node:crypto';
import { cpSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { H, SimulatedClock, jcs, seal, sha256Hex } from '../../src/core/index.js';
import { exportPackage, makeAnchor, verifyPackage } from '../../src/ledger/index.js';
import type { LedgerAnchor, PackageManifest } from '../../src/ledger/index.js';
import { fillSampleStore, openStore, runCli, tempDir } from './helpers.js';

type Json = Record<string, unknown>;
const EP_FILE = 'endpoints/mhs___localhost_7400/evidence.jsonl';

let root: { dir: string; cleanup: () => void };
let pristine: string;
let headAnchor: LedgerAnchor;
let packageAnchor: LedgerAnchor;
let n = 0;

const readLines = (dir: string, file: string): Json[] =>
  readFileSync(join(dir, file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Json);
const writeLines = (dir: string, file: string, values: Json[]): void =>
  writeFileSync(join(dir, file), values.map((v) => `${jcs(v)}\n`).join(''));

function listAll(dir: string, rel = ''): string[] {
  return readdirSync(join(dir, rel)).flatMap((name) => {
    const p = rel ? `${rel}/${name}` : name;
    return statSync(join(dir, p)).isDirectory() ? listAll(dir, p) : [p];
  });
}

/** Re-links a chain from its first entry: seq, prev_digest and digest recomputed (the forger's tool). */
function relink(entries: Json[]): Json[] {
  const out: Json[] = [];
  for (const [i, e] of entries.entries()) {
    const { digest: _d, ...rest } = e;
    const prev = out[i - 1];
    out.push(
      seal({
        ...rest,
        seq: prev ? (prev['seq'] as number) + 1 : rest['seq'],
        prev_digest: prev ? prev['digest'] : rest['prev_digest'],
      }),
    );
  }
  return out;
}

/** A forged copy: `edit` changes the files; then every chain, head, file hash and manifest_sha256 is re-sealed. */
function forge(edit: (dir: string) => void): string {
  const dir = join(root.dir, `forged-${++n}`);
  cpSync(pristine, dir, { recursive: true });
  edit(dir);
  const ledger = relink(readLines(dir, 'ledger.jsonl'));
  writeLines(dir, 'ledger.jsonl', ledger);
  const ep = relink(readLines(dir, EP_FILE));
  writeLines(dir, EP_FILE, ep);
  const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as PackageManifest;
  const last = ledger[ledger.length - 1] as Json;
  m.ledger.head_seq = last['seq'] as number;
  m.ledger.head_digest = last['digest'] as string;
  const e0 = m.endpoints[0] as PackageManifest['endpoints'][number];
  e0.head_digest = ep[ep.length - 1]?.['digest'] as string;
  m.files = listAll(dir)
    .filter((p) => p !== 'manifest.json')
    .sort()
    .map((p) => {
      const b = readFileSync(join(dir, p));
      return { path: p, size: b.length, sha256: sha256Hex(b) };
    });
  const { manifest_sha256: _x, ...rest } = m;
  writeFileSync(join(dir, 'manifest.json'), jcs({ ...rest, manifest_sha256: H(rest) }));
  return dir;
}

const reasons = async (dir: string, anchor?: LedgerAnchor): Promise<string[]> =>
  (await verifyPackage(dir, anchor ? { anchor } : {})).problems.map((p) => p.reason);

// ---- A checker written from docs/ledger.md step 7 alone (JCS via `canonicalize`, sha256 via node:crypto).
const docH = (v: unknown): string =>
  createHash('sha256')
    .update(canonicalize(v) as string)
    .digest('hex');
function docCrossCheck(dir: string, anchor?: LedgerAnchor): string[] {
  const out: string[] = [];
  const host = readLines(dir, 'ledger.jsonl');
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Json;
  const bundle = readLines(dir, EP_FILE);
  const ep = (manifest['endpoints'] as Json[])[0] as Json;
  const exports = host.filter(
    (e) => e['kind'] === 'evidence.export' && e['source'] === 'endpoint' && e['endpoint_id'] === ep['endpoint_id'],
  );
  const binding = exports[exports.length - 1];
  if (
    !binding ||
    binding['genesis_digest'] !== ep['genesis_digest'] ||
    binding['head_digest'] !== ep['head_digest'] ||
    binding['entries'] !== bundle.length
  )
    out.push('bundle_unbound');
  const inBundle = new Map(bundle.map((e) => [e['digest'], e]));
  const hostDigests = new Set<unknown>();
  for (const r of host.filter((e) => e['kind'] === 'receipt')) {
    const ev = (r['receipt'] as Json)['evidence'] as Json;
    hostDigests.add(ev['digest']);
    if (inBundle.has(ev['digest'])) continue;
    if (binding && (r['seq'] as number) < (binding['seq'] as number) && inBundle.has(ev['prev_digest']))
      out.push('receipt_missing_from_bundle');
  }
  for (const e of bundle)
    if (e['kind'] === 'receipt' && !hostDigests.has(e['digest'])) {
      const cmd = (e['body'] as Json)['command_id'];
      const kinds = host.filter((h) => h['command_id'] === cmd).map((h) => h['kind']);
      if (!(kinds.includes('command.unknown') && !kinds.includes('receipt'))) out.push('receipt_not_in_ledger');
    }
  const lineDigest = (l: Json): string => {
    const { seq: _s, ts: _t, ledger_seq: _l, ...rest } = l;
    return docH(rest);
  };
  const bound = host.filter((e) => e['kind'] === 'tool_call' && e['transcript_digests']);
  const used = new Set<unknown>();
  for (const l of readLines(dir, 'transcript.jsonl')) {
    if (l['kind'] === 'tool_call') {
      const e = bound.find(
        (b) =>
          !used.has(`c${String(b['seq'])}`) &&
          b['agent_run_id'] === l['session_id'] &&
          (b['transcript_digests'] as Json)['call'] === lineDigest(l),
      );
      if (e) used.add(`c${String(e['seq'])}`);
      else out.push('transcript_unbound');
    } else if (l['kind'] === 'tool_result') {
      const e = host.find((h) => h['seq'] === l['ledger_seq']);
      const ok = e && (e['transcript_digests'] as Json | undefined)?.['result'] === lineDigest(l);
      if (ok && !used.has(`r${String(e['seq'])}`)) used.add(`r${String(e['seq'])}`);
      else out.push('transcript_unbound');
    }
  }
  for (const b of bound)
    for (const k of ['c', 'r']) if (!used.has(`${k}${String(b['seq'])}`)) out.push('transcript_line_missing');
  if (anchor) {
    const at = host.find((h) => h['seq'] === anchor.seq);
    const last = host[host.length - 1] as Json;
    if (anchor.manifest_sha256 !== undefined && anchor.manifest_sha256 !== manifest['manifest_sha256'])
      out.push('anchor_mismatch');
    else if (at && at['digest'] !== anchor.digest) out.push('anchor_mismatch');
    else if (!at && anchor.seq > (last['seq'] as number)) out.push('anchor_ahead');
    if (anchor.signature) {
      const { signature, ...body } = anchor;
      const ok = edVerify(
        null,
        Buffer.from(canonicalize(body) as string),
        signature.public_key,
        Buffer.from(signature.value, 'base64'),
      );
      if (!ok) out.push('anchor_signature');
    }
  }
  return [...new Set(out)];
}

beforeAll(async () => {
  root = tempDir('mhs-forgery-');
  const clock = new SimulatedClock();
  const { db, ledger } = await openStore(join(root.dir, 'host.db'), clock);
  await fillSampleStore(db, clock, ledger);
  pristine = join(root.dir, 'pristine');
  const r = await exportPackage({ db, outDir: pristine, clock });
  expect(r.status).toBe('verified');
  await db.close();
  const head = { seq: r.manifest.ledger.head_seq, digest: r.manifest.ledger.head_digest };
  headAnchor = makeAnchor(head, r.manifest.created_at);
  packageAnchor = makeAnchor(head, r.manifest.created_at, undefined, r.manifest.manifest_sha256);
});

afterAll(() => root.cleanup());

/** Drops the host entries `pick` selects. */
const dropHost = (pick: (e: Json) => boolean) => (dir: string) =>
  writeLines(
    dir,
    'ledger.jsonl',
    readLines(dir, 'ledger.jsonl').filter((e) => !pick(e)),
  );

const secondReceiptCommand = (dir: string): unknown =>
  (readLines(dir, EP_FILE).filter((e) => e['kind'] === 'receipt')[1]?.['body'] as Json)['command_id'];

describe('a re-sealed forgery is caught (issue 20)', () => {
  it('the clean package verifies by the verifier and by the documented checks, with either anchor', async () => {
    for (const a of [undefined, headAnchor, packageAnchor]) {
      expect(await reasons(pristine, a)).toEqual([]);
      expect(docCrossCheck(pristine, a)).toEqual([]);
    }
    const v = await verifyPackage(pristine);
    // Every receipt is checked both ways and every tool line is bound: the checks ran, not just passed.
    expect(v.checked.receipts_cross_checked).toBe(
      readLines(pristine, EP_FILE).filter((e) => e['kind'] === 'receipt').length,
    );
    expect(v.checked.transcript_bound).toBe(readLines(pristine, 'transcript.jsonl').length);
  });

  it('a dropped endpoint receipt (chain re-linked): the bundle is not the recorded one and a host receipt has no place', async () => {
    const dir = forge((d) => {
      const cmd = secondReceiptCommand(d);
      writeLines(
        d,
        EP_FILE,
        readLines(d, EP_FILE).filter((e) => (e['body'] as Json)['command_id'] !== cmd),
      );
    });
    const r = await reasons(dir);
    expect(r).toContain('bundle_unbound');
    expect(r).toContain('receipt_missing_from_bundle');
    expect(docCrossCheck(dir)).toEqual(expect.arrayContaining(['bundle_unbound', 'receipt_missing_from_bundle']));
    const v = await verifyPackage(dir);
    // Both positions: the host ledger seq, and the endpoint seq the receipt claims.
    expect(v.problems.find((p) => p.reason === 'receipt_missing_from_bundle')?.detail).toMatch(
      /seq \d+.*endpoint seq \d+/,
    );
  });

  it('a truncated endpoint bundle: its head is not the head the host recorded', async () => {
    const dir = forge((d) => writeLines(d, EP_FILE, readLines(d, EP_FILE).slice(0, -1)));
    expect(await reasons(dir)).toEqual(expect.arrayContaining(['bundle_unbound', 'receipt_missing_from_bundle']));
    expect(docCrossCheck(dir)).toContain('bundle_unbound');
  });

  it('a dropped host receipt, or intent and receipt: the endpoint receipt is not in the ledger, and the head moved', async () => {
    for (const kinds of [['receipt'], ['receipt', 'command.intent']]) {
      let cmd: unknown;
      const dir = forge((d) => {
        cmd = secondReceiptCommand(d);
        dropHost((e) => kinds.includes(e['kind'] as string) && e['command_id'] === cmd)(d);
      });
      expect(await reasons(dir)).toContain('receipt_not_in_ledger');
      expect(docCrossCheck(dir)).toContain('receipt_not_in_ledger');
      expect(await reasons(dir, headAnchor)).toContain('anchor_ahead');
      const v = await verifyPackage(dir);
      expect(v.problems.find((p) => p.reason === 'receipt_not_in_ledger')).toMatchObject({ file: EP_FILE });
    }
  });

  it('an edited tool result, a dropped transcript line, an inserted call: each is named', async () => {
    const edited = forge((d) => {
      const t = readLines(d, 'transcript.jsonl');
      const i = t.findIndex((l) => l['kind'] === 'tool_result');
      (t[i] as Json)['result'] = { status: 'failed' };
      writeLines(d, 'transcript.jsonl', t);
    });
    expect(await reasons(edited)).toEqual(expect.arrayContaining(['transcript_unbound', 'transcript_line_missing']));
    expect(docCrossCheck(edited)).toEqual(expect.arrayContaining(['transcript_unbound', 'transcript_line_missing']));

    const dropped = forge((d) => writeLines(d, 'transcript.jsonl', readLines(d, 'transcript.jsonl').slice(1)));
    expect(await reasons(dropped)).toEqual(['transcript_line_missing']);
    expect(docCrossCheck(dropped)).toEqual(['transcript_line_missing']);

    const inserted = forge((d) => {
      const t = readLines(d, 'transcript.jsonl');
      t.push({ ...(t[0] as Json), call_id: 'call_forged', input: { ticks: 99 }, seq: 999 });
      writeLines(d, 'transcript.jsonl', t);
    });
    expect(await reasons(inserted)).toEqual(['transcript_unbound']);
    expect(docCrossCheck(inserted)).toEqual(['transcript_unbound']);
  });

  it('a truncated host ledger tail and reordered entries: caught against a head the reviewer kept', async () => {
    const truncated = forge((d) => writeLines(d, 'ledger.jsonl', readLines(d, 'ledger.jsonl').slice(0, -1)));
    // Nothing inside the package contradicts this one: that is what the anchor is for (and what not_proven says).
    expect(await reasons(truncated)).toEqual([]);
    expect(await reasons(truncated, headAnchor)).toEqual(['anchor_ahead']);
    expect(await reasons(truncated, packageAnchor)).toEqual(['anchor_mismatch']);
    expect(docCrossCheck(truncated, headAnchor)).toEqual(['anchor_ahead']);

    const reordered = forge((d) => {
      const l = readLines(d, 'ledger.jsonl');
      const i = l.findIndex((e) => e['kind'] === 'session.open');
      [l[i], l[i + 1]] = [l[i + 1] as Json, l[i] as Json];
      writeLines(d, 'ledger.jsonl', l);
    });
    expect(await reasons(reordered, headAnchor)).toContain('anchor_mismatch');
    expect(docCrossCheck(reordered, headAnchor)).toContain('anchor_mismatch');
  });

  it('an appended forged entry: a package anchor catches it, a head anchor only covers what it anchored', async () => {
    const dir = forge((d) => {
      const l = readLines(d, 'ledger.jsonl');
      const last = l[l.length - 1] as Json;
      l.push({ ...last, seq: (last['seq'] as number) + 1, kind: 'operator.enable', operator: 'forger' });
      writeLines(d, 'ledger.jsonl', l);
    });
    expect(await reasons(dir, packageAnchor)).toEqual(['anchor_mismatch']);
    expect(docCrossCheck(dir, packageAnchor)).toEqual(['anchor_mismatch']);
    expect(await reasons(dir, headAnchor)).toEqual([]);
  });

  it('a signed anchor: pinned to the reviewer key; a forger’s own key or an edited anchor fails', async () => {
    const op = generateKeyPairSync('ed25519');
    const forger = generateKeyPairSync('ed25519');
    const pem = (k: typeof op.privateKey) => k.export({ type: 'pkcs8', format: 'pem' }).toString();
    const pub = op.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const signed = makeAnchor(headAnchor, headAnchor.ts, pem(op.privateKey));
    expect((await verifyPackage(pristine, { anchor: signed, publicKeyPem: pub })).anchor).toMatchObject({
      signature: 'valid_pinned',
    });
    expect((await verifyPackage(pristine, { anchor: signed })).anchor).toMatchObject({ signature: 'valid' });
    const byForger = makeAnchor(headAnchor, headAnchor.ts, pem(forger.privateKey));
    expect((await verifyPackage(pristine, { anchor: byForger, publicKeyPem: pub })).problems[0]).toMatchObject({
      reason: 'anchor_signature',
    });
    const edited = { ...signed, seq: signed.seq - 1 };
    expect(await reasons(pristine, edited)).toEqual(['anchor_signature']);
    expect(docCrossCheck(pristine, edited)).toContain('anchor_signature');
  });

  it(
    'mhs-host ledger head / export --anchor-out / verify --anchor in their own processes',
    { timeout: 120_000 },
    async () => {
      const db = join(root.dir, 'host.db');
      const keyDir = tempDir('mhs-keys-');
      try {
        const priv = join(keyDir.dir, 'op.key');
        const pub = join(keyDir.dir, 'op.pub');
        expect((await runCli(['ledger', 'keygen', '--private', priv, '--public', pub])).code).toBe(0);
        expect(statSync(priv).mode & 0o777).toBe(0o600);
        const head = join(keyDir.dir, 'head.json');
        const h = await runCli(['ledger', 'head', '--db', db, '--out', head, '--sign-key', priv]);
        expect(h.code).toBe(0);
        expect(h.stdout).toMatch(/head seq \d+ digest [0-9a-f]{64} \(signed\)/);
        const pkg = join(keyDir.dir, 'pkg');
        const pkgAnchor = join(keyDir.dir, 'pkg.anchor.json');
        const x = await runCli(['ledger', 'export', '--db', db, '--out', pkg, '--anchor-out', pkgAnchor]);
        expect(x.code).toBe(0);
        const ok = await runCli(['ledger', 'verify', pkg, '--anchor', head, '--public-key', pub]);
        expect(ok.code).toBe(0);
        expect(ok.stdout).toContain('verifies');
        expect((await runCli(['ledger', 'verify', pkg, '--anchor', pkgAnchor])).code).toBe(0);
        const bare = await runCli(['ledger', 'verify', pkg]);
        expect(bare.stdout).toContain('no --anchor given');
        // The forged (truncated) package of the sample store fails against the head anchor taken here.
        const truncated = forge((d) => writeLines(d, 'ledger.jsonl', readLines(d, 'ledger.jsonl').slice(0, -1)));
        const bad = await runCli(['ledger', 'verify', truncated, '--anchor', head, '--public-key', pub]);
        expect(bad.code).toBe(1);
        expect(bad.stderr).toMatch(/MHS\.EVIDENCE\.CHAIN_BROKEN: ledger\.jsonl seq \d+ \(anchor_ahead/);
        const bogus = await runCli(['ledger', 'verify', pkg, '--anchor', priv]);
        expect(bogus.code).not.toBe(0);
        expect(bogus.stderr).toContain('MHS.HOST.CONFIG_INVALID');
      } finally {
        keyDir.cleanup();
      }
    },
  );
});
