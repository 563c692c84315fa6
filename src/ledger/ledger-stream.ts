/**
 * `ledger.jsonl` of a package, written and read as a stream (issue 21 item 7): line by line with a running sha256
 * and size, so neither the export nor the verifier holds the ledger's text (no single string: a 1M-entry ledger
 * no longer throws `RangeError: Invalid string length`). The chain is walked over the stored canonical bytes.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { isCanonicalText } from '../core/index.js';
import { ChainWalker } from './chain-walker.js';
import type { ChainBreak } from './chain-walker.js';
import type { Db } from './db.js';

type Json = Record<string, unknown>;

const PAGE = 5000;

/** What the walk over a ledger's lines found. */
export interface LedgerWalk {
  walker: ChainWalker;
  /** First chain break, if any. */
  break: ChainBreak | null;
}

/** What {@link writeLedgerFile} wrote. */
export interface WrittenLedger extends LedgerWalk {
  size: number;
  sha256: string;
  lines: number;
}

/**
 * Writes every stored ledger line of `db` to `path` (created, must not exist), page by page, walking the chain over
 * the stored bytes as it goes; `onEntry` sees each entry, parsed, in order. Memory: one page.
 */
export async function writeLedgerFile(db: Db, path: string, onEntry?: (e: Json) => void): Promise<WrittenLedger> {
  const hash = createHash('sha256');
  const walker = new ChainWalker(true);
  let brk: ChainBreak | null = null;
  let size = 0;
  let lines = 0;
  const fh = await open(path, 'wx');
  try {
    let from = -1;
    for (;;) {
      const rows = await db.all<{ seq: number; line: string }>(
        'SELECT seq, line FROM ledger_entries WHERE seq > ? ORDER BY seq LIMIT ?',
        [from, PAGE],
      );
      if (!rows.length) break;
      let chunk = '';
      for (const r of rows) {
        const e = JSON.parse(r.line) as Json;
        if (!brk) brk = walker.push(e, r.line);
        onEntry?.(e);
        chunk += `${r.line}\n`;
      }
      lines += rows.length;
      const bytes = Buffer.from(chunk, 'utf8');
      hash.update(bytes);
      size += bytes.length;
      await fh.write(bytes);
      if (rows.length < PAGE) break;
      from = (rows[rows.length - 1] as { seq: number }).seq;
    }
    await fh.sync();
  } finally {
    await fh.close();
  }
  return { walker, break: brk, size, sha256: hash.digest('hex'), lines };
}

/**
 * The text of `bytes`, or null when they are not UTF-8 (issue 21: `isUtf8` and a one-byte decode for ASCII, which the
 * ledger's JCS lines almost always are, cost a fraction of a fatal `TextDecoder`). A byte order mark is kept as text,
 * as `ignoreBOM` did, so such a line is not canonical.
 */
function decodeUtf8(bytes: Buffer): string | null {
  if (isAscii(bytes)) return bytes.toString('latin1');
  return isUtf8(bytes) ? bytes.toString('utf8') : null;
}

/** A line that is not the JCS text of its value, or does not parse. */
export interface LineProblem {
  reason: 'malformed' | 'not_canonical';
  seq: number | null;
  detail: string;
}

/** What {@link readLedgerFile} found. */
export interface ReadLedger extends LedgerWalk {
  size: number;
  sha256: string;
  /** The file's own problem, as `parseCanonicalLines` would name it (not UTF-8 first, then the final newline). */
  problem: LineProblem | { reason: 'not_utf8' | 'not_canonical'; seq: null; detail?: string } | null;
}

/**
 * Reads a package's `ledger.jsonl` as a stream: sha256 and size of its bytes, each line checked as the JCS text of
 * its value (over the stored text, canonicalising only when a fast check disagrees) and walked as a chain over those
 * bytes; `onEntry` sees each canonical entry, parsed, in order. Memory: one chunk, whatever the ledger's length.
 */
export async function readLedgerFile(path: string, onEntry?: (e: Json) => void): Promise<ReadLedger> {
  const hash = createHash('sha256');
  const walker = new ChainWalker(true);
  let brk: ChainBreak | null = null;
  let size = 0;
  let index = 0;
  let notUtf8 = false;
  let lineProblem: LineProblem | null = null;
  let rest: Buffer = Buffer.alloc(0);
  const line = (text: string): void => {
    const i = index++;
    if (lineProblem) return;
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      lineProblem = { reason: 'malformed', seq: null, detail: `line ${i + 1}` };
      return;
    }
    if (!isCanonicalText(v, text)) {
      const seq =
        v && typeof v === 'object' && typeof (v as { seq?: unknown }).seq === 'number'
          ? (v as { seq: number }).seq
          : null;
      lineProblem = { reason: 'not_canonical', seq, detail: `line ${i + 1}` };
      return;
    }
    if (!brk) brk = walker.push(v, text, true);
    if (v && typeof v === 'object' && !Array.isArray(v)) onEntry?.(v as Json);
  };
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
    if (notUtf8) continue;
    const buf = rest.length ? Buffer.concat([rest, chunk]) : chunk;
    const nl = buf.lastIndexOf(0x0a);
    if (nl < 0) {
      rest = Buffer.from(buf);
      continue;
    }
    // Whole lines only: a newline byte never falls inside a UTF-8 sequence, so each part decodes on its own.
    const text = decodeUtf8(buf.subarray(0, nl));
    if (text === null) {
      notUtf8 = true;
      continue;
    }
    rest = Buffer.from(buf.subarray(nl + 1));
    for (const l of text.split('\n')) line(l);
  }
  if (rest.length && !notUtf8) {
    // Still checked, so a file that is not UTF-8 is named so whatever its last line.
    if (!isUtf8(rest)) notUtf8 = true;
  }
  const problem = notUtf8
    ? { reason: 'not_utf8' as const, seq: null }
    : rest.length
      ? { reason: 'not_canonical' as const, seq: null, detail: 'missing final newline' }
      : lineProblem;
  return { walker, break: brk, size, sha256: hash.digest('hex'), problem };
}
