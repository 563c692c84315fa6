import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isCanonicalText } from '../core/index.js';
import { ChainWalker } from './chain-walker.js';
import { receiptBodyShape, replayedDeviation } from './evidence-conformance.js';
import type { PackageBreak, PackageDeviation } from './package-format.js';

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
    if (!isCanonicalText(v, line)) {
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

/** What {@link checkEndpointChain} found: the first break, and the conformance deviations of an intact chain. */
export interface EndpointChainCheck {
  break: PackageBreak | null;
  deviations: PackageDeviation[];
}

/**
 * Checks one endpoint chain (wire §1, §9): links from genesis, recomputed over each entry as the endpoint
 * hashed it, `genesis_digest`/`head_digest`, and the receipt body shape. A body that keeps `replayed` on an
 * intact chain is a deviation of `endpointId` (`MHS.EVIDENCE.NONCONFORMING`), not a break (issue 16).
 */
export function checkEndpointChain(
  entries: readonly unknown[],
  genesisDigest: unknown,
  headDigest: unknown,
  file: string,
  endpointId: string,
): EndpointChainCheck {
  const w = new ChainWalker(false);
  const deviations: PackageDeviation[] = [];
  const broken = (b: PackageBreak): EndpointChainCheck => ({ break: b, deviations: [] });
  for (const e of entries) {
    const b = w.push(e);
    if (b) return broken(brk(file, b.seq, b.reason));
    const entry = e as { kind?: unknown; body?: unknown; seq: number };
    if (entry.kind !== 'receipt') continue;
    const shape = receiptBodyShape(entry.body);
    if (shape === 'invalid') return broken(brk(file, entry.seq, 'receipt_body'));
    if (shape === 'keeps_replayed') deviations.push(replayedDeviation(endpointId, file, entry.seq));
  }
  if (!w.first || w.first['digest'] !== genesisDigest) return broken(brk(file, 0, 'genesis', 'genesis_digest differs'));
  if (w.last?.['digest'] !== headDigest)
    return broken(brk(file, (w.last?.['seq'] as number) ?? null, 'head', 'head_digest differs'));
  return { break: null, deviations };
}

/** The first break of one endpoint chain, or null (see {@link checkEndpointChain}; deviations are not breaks). */
export function endpointChainBreak(
  entries: readonly unknown[],
  genesisDigest: unknown,
  headDigest: unknown,
  file: string,
): PackageBreak | null {
  return checkEndpointChain(entries, genesisDigest, headDigest, file, '').break;
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
