// Issue 18 item 4: the evidence package of `mhs-host ledger export` (shared/spec/export-package.md), built by the
// same `exportPackage` into a private temporary folder and handed over as one ustar archive of that folder.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tar from 'tar-stream';
import type { Clock } from '../core/index.js';
import type { Db } from '../ledger/db.js';
import { exportPackage } from '../ledger/export-package.js';
import type { ExportResult } from '../ledger/export-package.js';
import type { Ledger } from '../ledger/ledger-types.js';
import { MANIFEST_FILE } from '../ledger/package-format.js';

/** The archive and what the package says of itself. */
export interface EvidenceArchive {
  /** `mhs-evidence-seq<head>.tar`; the archive holds one folder of that name without `.tar`. */
  name: string;
  body: Buffer;
  status: ExportResult['status'];
  break?: ExportResult['break'];
  manifest_sha256: string;
  head_seq: number;
}

/** The package's files (every one its manifest lists, then the manifest) as a tar of one folder. */
async function archive(dir: string, root: string, r: ExportResult): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise<void>((resolve, reject) => {
    pack.once('end', resolve);
    pack.once('error', reject);
  });
  // Observed now, so a failure while entries are added is never an unhandled rejection; awaited below.
  ended.catch(() => undefined);
  const mtime = new Date(r.manifest.created_at);
  for (const path of [...r.manifest.files.map((f) => f.path), MANIFEST_FILE]) {
    const content = await readFile(join(dir, path));
    await new Promise<void>((resolve, reject) =>
      pack.entry({ name: `${root}/${path}`, mode: 0o644, mtime }, content, (err) => (err ? reject(err) : resolve())),
    );
  }
  pack.finalize();
  await ended;
  return Buffer.concat(chunks);
}

/**
 * Exports the package (recorded as `evidence.export` with `record`, HOST-050) and archives it. The temporary
 * folder is removed whatever happens; export errors are `exportPackage`'s (`MHS.HOST.OUTPUT_UNWRITABLE`, …).
 */
export async function evidenceArchive(o: {
  db: Db;
  ledger: Pick<Ledger, 'append'>;
  clock: Clock;
  sessionId?: string;
  record: Readonly<Record<string, unknown>>;
}): Promise<EvidenceArchive> {
  const tmp = await mkdtemp(join(tmpdir(), 'mhs-evidence-'));
  try {
    const r = await exportPackage({
      db: o.db,
      outDir: join(tmp, 'package'),
      clock: o.clock,
      ledger: o.ledger,
      ...(o.sessionId ? { sessionId: o.sessionId } : {}),
      record: o.record,
    });
    const root = `mhs-evidence-seq${r.manifest.ledger.head_seq}`;
    return {
      name: `${root}.tar`,
      body: await archive(r.dir, root, r),
      status: r.status,
      ...(r.break ? { break: r.break } : {}),
      manifest_sha256: r.manifest.manifest_sha256,
      head_seq: r.manifest.ledger.head_seq,
    };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
