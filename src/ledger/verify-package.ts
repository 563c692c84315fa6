import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { H, jcs, sha256Hex } from '../core/index.js';
import { readLedgerFile } from './ledger-stream.js';
import type { ReadLedger } from './ledger-stream.js';
import { checkAnchor } from './ledger-anchor.js';
import type { AnchorSignature, LedgerAnchor } from './ledger-anchor.js';
import { bindBundles, crossCheckReceipts, crossCheckTranscript, emptyCounts } from './package-cross-check.js';
import type { CrossCheckCounts } from './package-cross-check.js';
import { HostFacts } from './host-facts.js';
import type { BundleView } from './host-facts.js';
import { brk, checkEndpointChain, listFiles, parseCanonicalLines } from './package-checks.js';
import { fullyCovered, packageCoverage } from './package-coverage.js';
import type { PackageCoverage } from './package-coverage.js';
import {
  LEDGER_FILE,
  MANIFEST_FILE,
  NOT_PROVEN,
  PACKAGE_FORMAT,
  README_FILE,
  TRANSCRIPT_FILE,
  endpointEvidencePath,
  manifestPath,
} from './package-format.js';
import type { PackageBreak, PackageDeviation } from './package-format.js';

/**
 * Result of {@link verifyPackage}. `first` is the first broken chain link if any, else the first problem. `ok` is
 * true when nothing is broken; `status` says whether everything was also covered (`verified`) or some evidence
 * could not be checked (`partial`, `coverage` says what).
 */
export interface PackageVerification {
  ok: boolean;
  status: 'verified' | 'partial' | 'broken';
  /** Present when the chains are intact: what the cross-checks covered. */
  coverage?: PackageCoverage;
  code?: 'MHS.EVIDENCE.CHAIN_BROKEN';
  first?: PackageBreak;
  problems: PackageBreak[];
  /** Conformance deviations of endpoints whose chains are intact (issue 16): reported, never a break. */
  deviations: PackageDeviation[];
  checked: {
    files: number;
    ledger_entries: number;
    endpoint_entries: number;
    manifests: number;
  } & CrossCheckCounts;
  /** Present when an anchor was given: what its signature proved (`valid_pinned`: against the reviewer's key). */
  anchor?: { seq: number; digest: string; signature: AnchorSignature };
}

/** Options of {@link verifyPackage}. */
export interface VerifyOptions {
  /** A head the reviewer kept outside the package (`mhs-host ledger head`): the package must hold it. */
  anchor?: LedgerAnchor;
  /** The reviewer's copy of the signer's Ed25519 public key (PEM): the anchor must be signed by it. */
  publicKeyPem?: string;
}

const SAFE_PATH = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;
const HEX64 = /^[0-9a-f]{64}$/;
const CHAIN_REASONS = new Set([
  'digest',
  'prev_digest',
  'seq',
  'genesis',
  'checkpoint',
  'malformed',
  'head',
  'receipt_body',
  'cross_check',
  'receipt_missing_from_bundle',
  'receipt_not_in_ledger',
  'anchor_mismatch',
  'anchor_ahead',
]);

type Json = Record<string, unknown>;

/**
 * Verifies an evidence package offline, from its files alone (HOST-053, 093; algorithm in
 * docs/ledger.md): `manifest.json` is canonical and its `manifest_sha256` recomputes; every listed
 * file exists with its size and sha256, and no unlisted file is present; the host chain and every
 * endpoint chain recompute with the heads `manifest.json` names; every manifest's digest matches its
 * file name; host receipt entries match the endpoint evidence entry with the same digest. Every
 * problem is reported as `MHS.EVIDENCE.CHAIN_BROKEN` with the file and, for chain links, the seq. An intact
 * endpoint chain whose receipt bodies keep `replayed` is a deviation (`MHS.EVIDENCE.NONCONFORMING`, wire §9)
 * in `deviations`, and the package still verifies (issue 16).
 */
export async function verifyPackage(dir: string, opts: VerifyOptions = {}): Promise<PackageVerification> {
  const problems: PackageBreak[] = [];
  const deviations: PackageDeviation[] = [];
  const checked = {
    files: 0,
    ledger_entries: 0,
    endpoint_entries: 0,
    manifests: 0,
    ...emptyCounts(),
  };
  let anchored: PackageVerification['anchor'];
  let coverage: PackageCoverage | undefined;
  const done = (): PackageVerification => {
    const first = problems.find((p) => p.seq !== null && CHAIN_REASONS.has(p.reason)) ?? problems[0];
    const extra = anchored ? { anchor: anchored } : {};
    return problems.length
      ? {
          ok: false,
          status: 'broken',
          code: 'MHS.EVIDENCE.CHAIN_BROKEN',
          ...(first ? { first } : {}),
          problems,
          deviations,
          checked,
          ...extra,
        }
      : {
          ok: true,
          status: coverage && fullyCovered(coverage) ? 'verified' : 'partial',
          ...(coverage ? { coverage } : {}),
          problems,
          deviations,
          checked,
          ...extra,
        };
  };

  // 1. manifest.json: canonical JSON, manifest_sha256.
  let manifest: Json;
  try {
    const bytes = await readFile(join(dir, MANIFEST_FILE));
    const parsed = JSON.parse(bytes.toString('utf8')) as unknown;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    manifest = parsed as Json;
    if (!Buffer.from(jcs(manifest), 'utf8').equals(bytes)) problems.push(brk(MANIFEST_FILE, null, 'not_canonical'));
  } catch (err) {
    problems.push(brk(MANIFEST_FILE, null, 'malformed', err instanceof Error ? err.message : String(err)));
    return done();
  }
  const { manifest_sha256: claimed, ...rest } = manifest;
  if (claimed !== H(rest)) problems.push(brk(MANIFEST_FILE, null, 'manifest_sha256'));
  if (manifest['format'] !== PACKAGE_FORMAT || manifest['schema_version'] !== 1)
    problems.push(brk(MANIFEST_FILE, null, 'format'));
  const notProven = Array.isArray(manifest['not_proven']) ? (manifest['not_proven'] as unknown[]) : [];
  if (!NOT_PROVEN.every((s) => notProven.includes(s))) problems.push(brk(MANIFEST_FILE, null, 'not_proven'));

  // 2. Files: listed ones match, nothing unlisted.
  const listed = new Map<string, { size: number; sha256: string }>();
  const fileList = Array.isArray(manifest['files']) ? (manifest['files'] as Json[]) : null;
  if (!fileList) problems.push(brk(MANIFEST_FILE, null, 'files'));
  const contents = new Map<string, Buffer>();
  // ledger.jsonl is read last, once the bundles and transcript it is cross-checked against are known (issue 21); its
  // problems go where the loop would have put them.
  let ledgerListed: { size: unknown; sha256: unknown; at: number } | undefined;
  for (const f of fileList ?? []) {
    const path = f?.['path'];
    if (
      typeof path !== 'string' ||
      !SAFE_PATH.test(path) ||
      path.split('/').includes('..') ||
      path === MANIFEST_FILE ||
      listed.has(path)
    ) {
      problems.push(brk(MANIFEST_FILE, null, 'files', `bad entry ${JSON.stringify(path)}`));
      continue;
    }
    listed.set(path, { size: Number(f['size']), sha256: String(f['sha256']) });
    if (path === LEDGER_FILE) {
      ledgerListed = { size: f['size'], sha256: f['sha256'], at: problems.length };
      continue;
    }
    let bytes: Buffer;
    try {
      const st = await lstat(join(dir, path));
      if (!st.isFile()) throw new Error('not a regular file');
      bytes = await readFile(join(dir, path));
    } catch {
      problems.push(brk(path, null, 'missing'));
      continue;
    }
    checked.files++;
    if (bytes.length !== f['size']) problems.push(brk(path, null, 'size'));
    else if (sha256Hex(bytes) !== f['sha256']) problems.push(brk(path, null, 'sha256'));
    contents.set(path, bytes);
  }
  const present = await listFiles(dir);
  for (const p of present.files) if (p !== MANIFEST_FILE && !listed.has(p)) problems.push(brk(p, null, 'unlisted'));
  for (const p of present.odd) problems.push(brk(p, null, 'unlisted', 'not a regular file'));
  for (const p of [LEDGER_FILE, TRANSCRIPT_FILE, README_FILE])
    if (!listed.has(p)) problems.push(brk(p, null, 'missing'));

  // Endpoint bundles and the transcript, parsed before the ledger streams by (their problems reported below).
  const endpointProblems: PackageBreak[] = [];
  const bundles: BundleView[] = [];
  const endpoints = Array.isArray(manifest['endpoints']) ? (manifest['endpoints'] as Json[]) : [];
  for (const ep of endpoints) {
    const id = ep?.['endpoint_id'];
    const path = ep?.['path'];
    if (typeof id !== 'string' || path !== endpointEvidencePath(id)) {
      endpointProblems.push(brk(MANIFEST_FILE, null, 'endpoints', `bad endpoint ${JSON.stringify(id)}`));
      continue;
    }
    const bytes = contents.get(path);
    if (!bytes) {
      if (!listed.has(path)) endpointProblems.push(brk(path, null, 'missing'));
      continue;
    }
    const parsed = parseCanonicalLines(path, bytes);
    if ('problem' in parsed) {
      endpointProblems.push(parsed.problem);
      continue;
    }
    const c = checkEndpointChain(parsed.values, ep['genesis_digest'], ep['head_digest'], path, id);
    if (c.break) endpointProblems.push(c.break);
    deviations.push(...c.deviations);
    checked.endpoint_entries += parsed.values.length;
    bundles.push({
      endpoint_id: id,
      path,
      genesis_digest: ep['genesis_digest'],
      head_digest: ep['head_digest'],
      entries: parsed.values as Json[],
    });
  }
  const tBytes = contents.get(TRANSCRIPT_FILE);
  let transcript: Json[] | null = null;
  let transcriptProblem: PackageBreak | undefined;
  if (tBytes) {
    const parsed = parseCanonicalLines(TRANSCRIPT_FILE, tBytes);
    if ('problem' in parsed) transcriptProblem = parsed.problem;
    else transcript = parsed.values as Json[];
  }
  const session = typeof manifest['transcript_session'] === 'string' ? manifest['transcript_session'] : null;
  const facts = new HostFacts(bundles, transcript, session, opts.anchor ? new Set([opts.anchor.seq]) : undefined);

  // The host ledger, streamed (issue 21): hashed, parsed and chain-walked line by line, never held whole.
  let ledgerRead: ReadLedger | undefined;
  if (ledgerListed) {
    const found: PackageBreak[] = [];
    try {
      const st = await lstat(join(dir, LEDGER_FILE));
      if (!st.isFile()) throw new Error('not a regular file');
      const r = await readLedgerFile(join(dir, LEDGER_FILE), (e) => facts.push(e));
      checked.files++;
      if (r.size !== ledgerListed.size) found.push(brk(LEDGER_FILE, null, 'size'));
      else if (r.sha256 !== ledgerListed.sha256) found.push(brk(LEDGER_FILE, null, 'sha256'));
      ledgerRead = r;
    } catch {
      found.push(brk(LEDGER_FILE, null, 'missing'));
    }
    problems.splice(ledgerListed.at, 0, ...found);
  }

  // 3. Host chain.
  const ledger = (manifest['ledger'] ?? {}) as Json;
  let hostIntact = false;
  if (ledger['path'] !== LEDGER_FILE) problems.push(brk(MANIFEST_FILE, null, 'ledger'));
  if (ledgerRead) {
    const r = ledgerRead;
    if (r.problem) problems.push(brk(LEDGER_FILE, r.problem.seq, r.problem.reason, r.problem.detail));
    else {
      const w = r.walker;
      const broke = r.break !== null;
      if (r.break) problems.push(brk(LEDGER_FILE, r.break.seq, r.break.reason));
      checked.ledger_entries = w.count;
      hostIntact = !broke;
      if (!broke) {
        const first = w.first ?? {};
        const last = w.last ?? {};
        if (!w.first) problems.push(brk(LEDGER_FILE, null, 'genesis', 'empty ledger'));
        else if (ledger['first_seq'] !== first['seq'] || ledger['genesis_digest'] !== first['digest']) {
          problems.push(brk(LEDGER_FILE, first['seq'] as number, 'genesis', 'first_seq/genesis_digest differ'));
        } else if (ledger['head_seq'] !== last['seq'] || ledger['head_digest'] !== last['digest']) {
          problems.push(brk(LEDGER_FILE, last['seq'] as number, 'head', 'head_seq/head_digest differ'));
        }
        const cp = ledger['checkpoint'] as Json | undefined;
        if ((first['kind'] === 'checkpoint') !== (cp !== undefined) || (cp && cp['digest'] !== first['digest'])) {
          problems.push(
            brk(LEDGER_FILE, (first['seq'] as number) ?? null, 'checkpoint', 'manifest.json must name the checkpoint'),
          );
        }
      }
    }
  }

  // 4. Endpoint chains (parsed above).
  problems.push(...endpointProblems);

  // 5. Manifests named by digest.
  const digests = Array.isArray(manifest['manifests']) ? (manifest['manifests'] as unknown[]) : [];
  for (const d of digests) {
    if (typeof d !== 'string' || !HEX64.test(d)) {
      problems.push(brk(MANIFEST_FILE, null, 'manifests', `bad digest ${JSON.stringify(d)}`));
      continue;
    }
    const path = manifestPath(d);
    const bytes = contents.get(path);
    if (!bytes) {
      if (!listed.has(path)) problems.push(brk(path, null, 'missing'));
      continue;
    }
    try {
      const m = JSON.parse(bytes.toString('utf8')) as Json;
      const { manifest_digest, ...body } = m;
      if (!Buffer.from(jcs(m), 'utf8').equals(bytes)) problems.push(brk(path, null, 'not_canonical'));
      else if (manifest_digest !== d || H(body) !== d) problems.push(brk(path, null, 'manifest_digest'));
      else checked.manifests++;
    } catch {
      problems.push(brk(path, null, 'malformed'));
    }
  }
  for (const p of listed.keys()) {
    if (p.startsWith('manifests/') && !digests.some((d) => typeof d === 'string' && manifestPath(d) === p)) {
      problems.push(brk(p, null, 'unlisted', 'not named in manifests'));
    }
  }

  // 6. Transcript: canonical JSON lines (parsed above).
  if (transcriptProblem) problems.push(transcriptProblem);

  // 7. Cross-checks (issue 20): bundles bound to the ledger, receipts both ways, transcript to tool_call entries.
  if (hostIntact) {
    const boundAt = bindBundles(facts, bundles, problems, checked);
    crossCheckReceipts(facts, bundles, boundAt, problems, checked);
    if (transcript) crossCheckTranscript(facts, transcript, problems, checked);
    coverage = packageCoverage(facts, checked);
    if (opts.anchor) {
      const a = checkAnchor(opts.anchor, facts.ends, opts.publicKeyPem, manifest['manifest_sha256']);
      if (a.problem) problems.push(a.problem);
      anchored = { seq: opts.anchor.seq, digest: opts.anchor.digest, signature: a.signature };
    }
  }

  // 8. The package's own claim.
  const ver = (manifest['verification'] ?? {}) as Json;
  if (!problems.length && ver['status'] !== 'verified')
    problems.push(brk(MANIFEST_FILE, null, 'status', 'package is marked unverified'));
  return done();
}
