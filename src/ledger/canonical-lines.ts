// chain.js alone, not the core index: the checking thread (canonical-lines-worker.ts) starts without the rest of core.
import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { isCanonicalText } from '../core/chain.js';

/**
 * The canonical-form check of a package's `ledger.jsonl` (docs/ledger.md step 3: each line the JCS text of its
 * value), on its own (issue 21 item 3): the package verifier runs it on a thread of its own for a large file while it
 * hashes and walks the same file (canonical-lines-checker.ts), or here when that thread is not there.
 */

/** A line that is not the JCS text of its value, or does not parse; `index` is 0-based. */
export interface LineProblem {
  reason: 'malformed' | 'not_canonical';
  seq: number | null;
  detail: string;
  index: number;
}

/** The first problem among the file's newline-terminated lines, their number, and the sha256 of the bytes read. */
export interface LinesCheck {
  problem: LineProblem | null;
  lines: number;
  sha256: string;
}

/** The problem of one line (`parsed`: its value, when already parsed), or null when it is the JCS text of its value. */
export function lineProblem(text: string, index: number, parsed?: unknown): LineProblem | null {
  let v: unknown = parsed;
  if (v === undefined) {
    try {
      v = JSON.parse(text);
    } catch {
      return { reason: 'malformed', seq: null, detail: `line ${index + 1}`, index };
    }
  }
  if (isCanonicalText(v, text)) return null;
  const seq =
    v && typeof v === 'object' && typeof (v as { seq?: unknown }).seq === 'number' ? (v as { seq: number }).seq : null;
  return { reason: 'not_canonical', seq, detail: `line ${index + 1}`, index };
}

/**
 * Checks every newline-terminated line of `path` (a last line without its newline is not a line; the verifier names
 * that itself), in 1 MiB chunks. Bytes that are not UTF-8 decode with replacement characters: the verifier refuses
 * such a file before any line problem counts.
 */
export async function checkCanonicalLines(path: string): Promise<LinesCheck> {
  const hash = createHash('sha256');
  let problem: LineProblem | null = null;
  let index = 0;
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    const buf = rest.length ? Buffer.concat([rest, chunk]) : chunk;
    const nl = buf.lastIndexOf(0x0a);
    if (nl < 0) {
      rest = Buffer.from(buf);
      continue;
    }
    rest = Buffer.from(buf.subarray(nl + 1));
    const lines = buf.toString(isAscii(buf.subarray(0, nl)) ? 'latin1' : 'utf8', 0, nl).split('\n');
    if (problem) {
      index += lines.length;
      continue;
    }
    for (const l of lines) {
      if (!problem) problem = lineProblem(l, index);
      index++;
    }
  }
  return { problem, lines: index, sha256: hash.digest('hex') };
}
