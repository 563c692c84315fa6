/**
 * `ledger.jsonl` of a package, written and read as a stream (issue 21 item 7): line by line with a running sha256
 * and size, so neither the export nor the verifier holds the ledger's text (no single string: a 1M-entry ledger
 * no longer throws `RangeError: Invalid string length`). The chain is walked over the stored canonical bytes.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { isCanonicalText } from '../core/index.js';
import { ChainWalker } from './chain-walker.js';
import type { ChainBreak } from './chain-walker.js';
import type { Db } from './db.js';

type Json = Record<string, unknown>;

const PAGE = 5000;

/**
 * Whether the package's cross-checks (package-cross-check.ts, ledger-anchor.ts) read this host entry: bundle
 * bindings, receipts, command states and tool calls. The others are chain-checked and not kept.
 */
export function crossCheckRelevant(e: Json): boolean {
  const k = e['kind'];
  return (
    k === 'evidence.export' ||
    k === 'receipt' ||
    k === 'tool_call' ||
    k === 'checkpoint' ||
    typeof e['command_id'] === 'string'
  );
}

/** What the walk over a ledger's lines found. */
export interface LedgerWalk {
  walker: ChainWalker;
  /** First chain break, if any. */
  break: ChainBreak | null;
  /** The entries the cross-checks read, in order, with the first and last entry always among them. */
  view: Json[];
  /** Seqs that must stay in `view` whole (e.g. an anchored one). */
  keep?: ReadonlySet<number>;
  lastFull?: Json;
  lastKept?: Json;
}

function newWalk(keep?: ReadonlySet<number>): LedgerWalk {
  return { walker: new ChainWalker(true), break: null, view: [], ...(keep ? { keep } : {}) };
}

/** Kinds the cross-checks read whole; other entries with a command id are kept as `{seq, kind, command_id, outcome}`. */
const WHOLE = new Set(['evidence.export', 'receipt', 'tool_call', 'checkpoint']);

function feed(w: LedgerWalk, e: unknown, line: string, canonical: boolean): void {
  if (!w.break) w.break = w.walker.push(e, line, canonical);
  const entry = e as Json;
  if (!entry || typeof entry !== 'object') return;
  const seq = entry['seq'];
  w.lastFull = entry;
  if (!w.view.length || WHOLE.has(String(entry['kind'])) || (typeof seq === 'number' && w.keep?.has(seq))) {
    w.view.push(entry);
  } else if (typeof entry['command_id'] === 'string') {
    // Only what commandStates reads: memory per command, not per byte of its entries (issue 21).
    w.view.push({
      seq,
      kind: entry['kind'],
      command_id: entry['command_id'],
      ...(entry['outcome'] !== undefined ? { outcome: entry['outcome'] } : {}),
    });
  } else return;
  w.lastKept = entry;
}

function finish(w: LedgerWalk): void {
  const last = w.lastFull;
  if (!last) return;
  // The last entry is always there whole (the head, anchors): replace its slim copy, or add it.
  if (w.lastKept === last && w.view[w.view.length - 1] !== last) w.view[w.view.length - 1] = last;
  else if (w.lastKept !== last) w.view.push(last);
}

/** What {@link writeLedgerFile} wrote. */
export interface WrittenLedger extends LedgerWalk {
  size: number;
  sha256: string;
  lines: number;
}

/**
 * Writes every stored ledger line of `db` to `path` (created, must not exist), page by page, walking the chain over
 * the stored bytes as it goes. Memory: one page plus the cross-check view.
 */
export async function writeLedgerFile(db: Db, path: string, onEntry?: (e: Json) => void): Promise<WrittenLedger> {
  const hash = createHash('sha256');
  const w = newWalk();
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
        feed(w, e, r.line, false);
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
  finish(w);
  return { ...w, size, sha256: hash.digest('hex'), lines };
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
 * bytes. Memory: one chunk plus the cross-check view, whatever the ledger's length.
 */
export async function readLedgerFile(path: string, keep?: ReadonlySet<number>): Promise<ReadLedger> {
  const hash = createHash('sha256');
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const w = newWalk(keep);
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
    feed(w, v, text, true);
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
    let text: string;
    try {
      text = decoder.decode(buf.subarray(0, nl));
    } catch {
      notUtf8 = true;
      continue;
    }
    rest = Buffer.from(buf.subarray(nl + 1));
    for (const l of text.split('\n')) line(l);
  }
  if (rest.length && !notUtf8) {
    // Still decoded, so a file that is not UTF-8 is named so whatever its last line.
    try {
      decoder.decode(rest);
    } catch {
      notUtf8 = true;
    }
  }
  finish(w);
  const problem = notUtf8
    ? { reason: 'not_utf8' as const, seq: null }
    : rest.length
      ? { reason: 'not_canonical' as const, seq: null, detail: 'missing final newline' }
      : lineProblem;
  return { ...w, size, sha256: hash.digest('hex'), problem };
}
