import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ErrorCode, H, HostError, isoAt, jcs, sha256Hex } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { openArtifacts } from './artifacts.js';
import type { Db } from './db.js';
import type { Ledger } from './ledger-types.js';
import { writeLedgerFile } from './ledger-stream.js';
import {
  LEDGER_FILE,
  MANIFEST_FILE,
  NOT_PROVEN,
  PACKAGE_FORMAT,
  PACKAGE_SCHEMA_VERSION,
  README_FILE,
  TRANSCRIPT_FILE,
  endpointEvidencePath,
  jsonlText,
  manifestPath,
  readmeText,
} from './package-format.js';
import type { PackageBreak, PackageDeviation, PackageManifest } from './package-format.js';
import { checkEndpointChain } from './package-checks.js';
import { bindBundles, crossCheckReceipts, crossCheckTranscript, emptyCounts } from './package-cross-check.js';
import { HostFacts } from './host-facts.js';

/** Options of {@link exportPackage}. */
export interface ExportOptions {
  db: Db;
  /** Folder to write; must not exist or be empty. */
  outDir: string;
  clock: Clock;
  host?: Partial<PackageManifest['host']>;
  /** Only this session's transcript (the ledger is always whole: a filtered chain cannot verify). */
  sessionId?: string;
  /** When given, the export is recorded as an `evidence.export` entry after it is written (HOST-050). */
  ledger?: Pick<Ledger, 'append'>;
  /** Fields added to that entry: who asked and how the package left the host (the operator API's download). */
  record?: Readonly<Record<string, unknown>>;
}

/** What {@link exportPackage} wrote. */
export interface ExportResult {
  dir: string;
  status: 'verified' | 'unverified';
  break?: PackageBreak;
  /** Conformance deviations of endpoints with intact chains (issue 16); they do not unverify the package. */
  deviations: PackageDeviation[];
  manifest: PackageManifest;
  /** Manifest digests the ledger references that the store does not hold. */
  missing_manifests: string[];
}

function collectManifestDigests(v: unknown, into: Set<string>): void {
  if (Array.isArray(v)) for (const x of v) collectManifestDigests(x, into);
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === 'manifest_digest' && typeof x === 'string' && /^[0-9a-f]{64}$/.test(x)) into.add(x);
      else collectManifestDigests(x, into);
    }
  }
}

/**
 * Writes the evidence package of `shared/spec/export-package.md` (HOST-051, 054, 055): the whole
 * host ledger, each endpoint's latest evidence bundle, every stored manifest, the transcript, a
 * README of what is not proven and `manifest.json`. Chains are checked first: a package with a
 * break is written `status: "unverified"` naming it (HOST-053), never "verified".
 * Fails with `MHS.HOST.CONFIG_INVALID` when `outDir` is a non-empty folder.
 */
export async function exportPackage(opts: ExportOptions): Promise<ExportResult> {
  const dir = opts.outDir;
  const st = await stat(dir).catch(() => null);
  if (st && !st.isDirectory())
    throw new HostError(
      ErrorCode.HOST_OUTPUT_UNWRITABLE,
      `${dir} exists and is not a folder: the package is written to a new folder`,
      { path: dir },
      { remediation: 'Pass --out a folder that does not exist yet (or an empty one).' },
    );
  const existing = st ? await readdir(dir) : [];
  if (existing.length) throw new HostError(ErrorCode.HOST_CONFIG_INVALID, 'export folder is not empty', { dir });
  const artifacts = await openArtifacts(opts.db, { clock: opts.clock });
  const files = new Map<string, string>();

  // The bundles and transcript first: the cross-checks then gather from the ledger only what they name (issue 21).
  const bundles = await artifacts.latestEvidenceBundles();
  const transcript = await artifacts.transcript(opts.sessionId ? { sessionId: opts.sessionId } : {});
  const views = bundles.map((b) => ({
    endpoint_id: b.endpoint_id,
    path: endpointEvidencePath(b.endpoint_id),
    genesis_digest: b.genesis_digest,
    head_digest: b.head_digest,
    entries: b.entries as unknown as Record<string, unknown>[],
  }));
  const facts = new HostFacts(views, transcript, opts.sessionId ?? null);

  // Host ledger: streamed to its file page by page, the chain walked over the stored bytes (issue 21).
  let written: Awaited<ReturnType<typeof writeLedgerFile>>;
  const referenced = new Set<string>();
  try {
    await mkdir(dir, { recursive: true });
    written = await writeLedgerFile(opts.db, join(dir, LEDGER_FILE), (e) => {
      collectManifestDigests(e, referenced);
      facts.push(e);
    });
  } catch (err) {
    await removeWritten(dir, st !== null).catch(() => undefined);
    const fsError = /^E[A-Z]+$/.test(String((err as { code?: unknown } | null)?.code));
    throw fsError ? outputUnwritable(err, dir) : err;
  }
  const b0 = written.break;
  const hostBreak: PackageBreak | undefined = b0
    ? { code: 'MHS.EVIDENCE.CHAIN_BROKEN', file: LEDGER_FILE, seq: b0.seq, reason: b0.reason }
    : undefined;
  const first = facts.first ?? {};
  const last = facts.last ?? {};

  // Nothing half-written (issue 16 item 3): on any failure from here the folder is left as found.
  const built = await (async () => {
    // Endpoint evidence.
    let endpointBreak: PackageBreak | undefined;
    const deviations: PackageDeviation[] = [];
    const endpoints: PackageManifest['endpoints'] = [];
    for (const bundle of bundles) {
      const path = endpointEvidencePath(bundle.endpoint_id);
      const c = checkEndpointChain(bundle.entries, bundle.genesis_digest, bundle.head_digest, path, bundle.endpoint_id);
      if (c.break && !endpointBreak) endpointBreak = c.break;
      // An endpoint's conformance deviation on an intact chain is named, and does not unverify (issue 16).
      deviations.push(...c.deviations);
      files.set(path, jsonlText(bundle.entries.map((e) => jcs(e))));
      endpoints.push({
        endpoint_id: bundle.endpoint_id,
        path,
        genesis_digest: bundle.genesis_digest,
        head_digest: bundle.head_digest,
      });
    }

    // Manifests (every one the host stored; the ledger's references must be among them).
    const stored = await artifacts.listManifests();
    for (const m of stored) {
      const body = await artifacts.getManifest(m.digest);
      files.set(manifestPath(m.digest), jcs(body));
    }
    const storedSet = new Set(stored.map((m) => m.digest));
    const missing = [...referenced].filter((d) => !storedSet.has(d)).sort();

    files.set(TRANSCRIPT_FILE, jsonlText(transcript.map((t) => jcs(t))));

    // Issue 20: the same cross-checks the verifier runs, so the package never claims more than they show.
    const crossProblems: PackageBreak[] = [];
    const counts = emptyCounts();
    const boundAt = bindBundles(facts, views, crossProblems, counts);
    if (!hostBreak) {
      crossCheckReceipts(facts, views, boundAt, crossProblems, counts);
      crossCheckTranscript(facts, transcript, crossProblems, counts);
    }
    for (const e of endpoints) {
      const seq = boundAt.get(e.endpoint_id);
      const unbound = crossProblems.some((p) => p.file === e.path && p.reason === 'bundle_unbound');
      if (seq !== undefined && !unbound)
        e.recorded_by = { seq, digest: String(facts.exports.get(e.endpoint_id)?.['digest']) };
    }
    const crossBreak = crossProblems[0];

    const created_at = isoAt(opts.clock.now());
    const brk = hostBreak ?? endpointBreak ?? crossBreak;
    const status: ExportResult['status'] = brk ? 'unverified' : 'verified';
    files.set(
      README_FILE,
      readmeText({ created_at, status, head_seq: Number(last['seq'] ?? -1), endpoints: endpoints.length }),
    );

    const ledgerInfo: PackageManifest['ledger'] = {
      path: LEDGER_FILE,
      first_seq: Number(first['seq']),
      genesis_digest: String(first['digest']),
      head_seq: Number(last['seq']),
      head_digest: String(last['digest']),
    };
    if (first['kind'] === 'checkpoint') {
      const sealed = first['sealed'] as { seq: number; digest: string };
      ledgerInfo.checkpoint = {
        seq: Number(first['seq']),
        digest: String(first['digest']),
        sealed_seq: sealed.seq,
        sealed_digest: sealed.digest,
      };
    }
    const body: Omit<PackageManifest, 'manifest_sha256'> = {
      format: PACKAGE_FORMAT,
      schema_version: PACKAGE_SCHEMA_VERSION,
      created_at,
      host: {
        name: opts.host?.name ?? 'mhs-host',
        version: opts.host?.version ?? '0.1.0',
        conformance_target: opts.host?.conformance_target ?? 'CL5',
        self_test: opts.host?.self_test ?? false,
      },
      ledger: ledgerInfo,
      endpoints,
      transcript_session: opts.sessionId ?? null,
      manifests: stored.map((m) => m.digest),
      verification: {
        host_chain: hostBreak ? 'broken' : 'ok',
        endpoint_chains: endpointBreak ? 'broken' : 'ok',
        cross_check: hostBreak ? 'not_checked' : crossBreak ? 'broken' : 'ok',
        status,
        ...(brk ? { break: brk } : {}),
        ...(deviations.length ? { deviations } : {}),
      },
      not_proven: [...NOT_PROVEN],
      files: [
        ...[...files.entries()].map(([path, text]) => ({
          path,
          size: Buffer.byteLength(text),
          sha256: sha256Hex(text),
        })),
        { path: LEDGER_FILE, size: written.size, sha256: written.sha256 },
      ].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    };
    const manifest: PackageManifest = { ...body, manifest_sha256: H(body) };

    try {
      for (const [path, text] of files) {
        await mkdir(dirname(join(dir, path)), { recursive: true });
        await writeFile(join(dir, path), text);
      }
      await writeFile(join(dir, MANIFEST_FILE), jcs(manifest));
    } catch (err) {
      throw outputUnwritable(err, dir);
    }
    return { status, brk, deviations, manifest, missing, ledgerInfo };
  })().catch(async (err: unknown) => {
    await removeWritten(dir, st !== null).catch(() => undefined);
    throw err;
  });
  const { status, brk, deviations, manifest, missing, ledgerInfo } = built;

  if (opts.ledger) {
    await opts.ledger.append({
      kind: 'evidence.export',
      out_dir: dir,
      status,
      manifest_sha256: manifest.manifest_sha256,
      head_seq: ledgerInfo.head_seq,
      head_digest: ledgerInfo.head_digest,
      ...(brk ? { break: brk } : {}),
      ...(deviations.length ? { deviations } : {}),
      ...opts.record,
    });
  }
  return { dir, status, ...(brk ? { break: brk } : {}), deviations, manifest, missing_manifests: missing };
}

async function removeWritten(dir: string, keepFolder: boolean): Promise<void> {
  if (!keepFolder) return rm(dir, { recursive: true, force: true });
  for (const name of await readdir(dir)) await rm(join(dir, name), { recursive: true, force: true });
}

/** A failed write of the package as `MHS.HOST.OUTPUT_UNWRITABLE`, naming the folder and the errno. */
function outputUnwritable(err: unknown, dir: string): HostError {
  const errno = (err as { code?: unknown } | null)?.code;
  return new HostError(
    ErrorCode.HOST_OUTPUT_UNWRITABLE,
    `cannot write the package to ${dir}: ${err instanceof Error ? err.message : String(err)}`,
    { path: dir, ...(typeof errno === 'string' ? { errno } : {}) },
    { remediation: 'Free disk space or pick a writable --out folder; nothing of the package was kept.', cause: err },
  );
}
