import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { jcs } from '../core/index.js';
import { ChainWalker } from './chain-walker.js';
import type { PackageBreak } from './package-format.js';

/** Building blocks of `verifyPackage` (verify-package.ts): problem records, canonical JSONL, endpoint chains, folder walk. */

/** A verification problem: always `MHS.EVIDENCE.CHAIN_BROKEN` (HOST-053). */
export function brk(file: string, seq: number | null, reason: string, detail?: string): PackageBreak {
  return { code: 'MHS.EVIDENCE.CHAIN_BROKEN', file, seq, reason, ...(detail ? { detail } : {}) };
}

/** Parses JSONL whose every line must be the JCS text of its value; returns values or a problem. */
export function parseCanonicalLines(file: string, bytes: Buffer): { values: unknown[] } | { problem: PackageBreak } {
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes)) return { problem: brk(file, null, 'not_utf8') };
  if (text === '') return { values: [] };
  if (!text.endsWith('\n')) return { problem: brk(file, null, 'not_canonical', 'missing final newline') };
  const values: unknown[] = [];
  const lines = text.slice(0, -1).split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      return { problem: brk(file, null, 'malformed', `line ${i + 1}`) };
    }
    if (jcs(v) !== line) {
      const seq =
        v && typeof v === 'object' && typeof (v as { seq?: unknown }).seq === 'number'
          ? (v as { seq: number }).seq
          : null;
      return { problem: brk(file, seq, 'not_canonical', `line ${i + 1}`) };
    }
    values.push(v);
  }
  return { values };
}

/**
 * Checks one endpoint chain (wire §1, §9): links from genesis, `genesis_digest`/`head_digest`, and
 * that receipt bodies omit `evidence` and `replayed`. Returns the first break or null.
 */
export function endpointChainBreak(
  entries: readonly unknown[],
  genesisDigest: unknown,
  headDigest: unknown,
  file: string,
): PackageBreak | null {
  const w = new ChainWalker(false);
  for (const e of entries) {
    const b = w.push(e);
    if (b) return brk(file, b.seq, b.reason);
    const entry = e as { kind?: unknown; body?: unknown; seq: number };
    if (entry.kind === 'receipt') {
      const body = entry.body as Record<string, unknown> | null;
      if (!body || typeof body !== 'object' || 'evidence' in body || 'replayed' in body) {
        return brk(file, entry.seq, 'receipt_body');
      }
    }
  }
  if (!w.first || w.first['digest'] !== genesisDigest) return brk(file, 0, 'genesis', 'genesis_digest differs');
  if (w.last?.['digest'] !== headDigest)
    return brk(file, (w.last?.['seq'] as number) ?? null, 'head', 'head_digest differs');
  return null;
}

export async function listFiles(root: string, rel = ''): Promise<{ files: string[]; odd: string[] }> {
  const out = { files: [] as string[], odd: [] as string[] };
  for (const d of await readdir(join(root, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${d.name}` : d.name;
    if (d.isDirectory()) {
      const sub = await listFiles(root, p);
      out.files.push(...sub.files);
      out.odd.push(...sub.odd);
    } else if (d.isFile()) out.files.push(p);
    else out.odd.push(p);
  }
  return out;
}
