import { Command, InvalidArgumentError } from 'commander';
import { ErrorCode, HostError, RealClock, shortDigest } from '../core/index.js';
import { exportPackage, openDb, openLedger, pruneLedger, resolveDbLocation, verifyPackage } from '../ledger/index.js';
import type { Db, DurableLedger, LedgerEntry, PackageDeviation, PackageVerification } from '../ledger/index.js';
import { anchorCommands, readAnchorOptions, readKey, writePackageAnchor } from './ledger-anchor-commands.js';

const HIDDEN = new Set(['seq', 'prev_digest', 'ts', 'kind', 'digest']);

function int(v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
}

async function withLedger<T>(dbFlag: string | undefined, fn: (db: Db, l: DurableLedger) => Promise<T>): Promise<T> {
  const db = await openDb(resolveDbLocation({ flag: dbFlag }));
  try {
    return await fn(db, await openLedger(db, { clock: new RealClock() }));
  } finally {
    await db.close();
  }
}

/** One readable line per entry: seq, time, kind, lookup ids, the rest compacted, short digest. */
export function formatEntry(e: LedgerEntry): string {
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e)) if (!HIDDEN.has(k)) rest[k] = v;
  let body = JSON.stringify(rest);
  if (body.length > 160) body = `${body.slice(0, 157)}...`;
  return `#${String(e.seq).padEnd(6)} ${e.ts}  ${e.kind.padEnd(17)} ${body}  ${shortDigest(e.digest)}`;
}

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** `mhs-host ledger`: show, export, verify, checkpoint, prune, status (issue 4; HOST-053…056, 093). */
export function ledgerCommand(): Command {
  const cmd = new Command('ledger').description('The evidence ledger: show, export, verify offline, retention');
  const dbOpt = [
    '--db <location>',
    'store: SQLite file or postgres:// URL (default $MHS_HOST_DB or ./.mhs-host/host.db)',
  ] as const;

  cmd
    .command('show')
    .description('Print ledger entries readably')
    .option(...dbOpt)
    .option('--from <seq>', 'first seq', int)
    .option('--to <seq>', 'last seq', int)
    .option('--kind <kind>', 'only entries of this kind')
    .option('--json', 'one JSON entry per line')
    .action(async (o: { db?: string; from?: number; to?: number; kind?: string; json?: boolean }) => {
      await withLedger(o.db, async (_db, l) => {
        const from = o.from ?? (await l.first()).seq;
        const entries = (await l.range(from, o.to)).filter((e) => !o.kind || e.kind === o.kind);
        for (const e of entries) print(o.json ? JSON.stringify(e) : formatEntry(e));
        if (!o.json) print(`${entries.length} entries; ledger ${l.status().state}`);
      });
    });

  cmd
    .command('export')
    .description('Write the evidence package (shared/spec/export-package.md) to a new folder')
    .option(...dbOpt)
    .requiredOption('--out <dir>', 'folder to create (must not exist or be empty)')
    .option('--session <id>', 'only this session in transcript.jsonl')
    .option(
      '--anchor-out <file>',
      'also write an anchor of this package (its head and manifest_sha256) to keep elsewhere',
    )
    .option('--sign-key <pem>', 'sign that anchor with this Ed25519 private key (PEM)')
    .action(async (o: { db?: string; out: string; session?: string; anchorOut?: string; signKey?: string }) => {
      const key = o.signKey ? await readKey(o.signKey) : undefined;
      await withLedger(o.db, async (db, l) => {
        const r = await exportPackage({
          db,
          outDir: o.out,
          clock: new RealClock(),
          ledger: l,
          ...(o.session ? { sessionId: o.session } : {}),
        });
        print(
          `exported ${r.dir}: ${r.status}, ledger seq ${r.manifest.ledger.first_seq}..${r.manifest.ledger.head_seq}, ${r.manifest.endpoints.length} endpoint(s), ${r.manifest.manifests.length} manifest(s)`,
        );
        print(`manifest_sha256 ${r.manifest.manifest_sha256}`);
        print(`head seq ${r.manifest.ledger.head_seq} digest ${r.manifest.ledger.head_digest}`);
        if (o.anchorOut) await writePackageAnchor(o.anchorOut, r.manifest, key);
        if (r.missing_manifests.length)
          print(`warning: manifests referenced but not stored: ${r.missing_manifests.join(', ')}`);
        printDeviations(r.deviations);
        if (r.break) {
          process.stderr.write(
            `error ${r.break.code}: ${r.break.file} seq ${r.break.seq ?? '-'} (${r.break.reason})\n`,
          );
          process.exitCode = 1;
        }
      });
    });

  cmd
    .command('verify')
    .description('Verify an exported package offline, from its files alone')
    .argument('<dir>', 'package folder')
    .option('--json', 'print the full result as JSON')
    .option('--record', 'also append an evidence.verify entry to the ledger at --db')
    .option('--anchor <file>', 'a head kept outside the package (mhs-host ledger head --out): the package must hold it')
    .option('--public-key <pem>', "the anchor signer's Ed25519 public key, as you hold it")
    .option(...dbOpt)
    .action(
      async (
        dir: string,
        o: { json?: boolean; record?: boolean; db?: string; anchor?: string; publicKey?: string },
      ) => {
        const r = await verifyPackage(dir, await readAnchorOptions(o));
        if (o.json) print(JSON.stringify(r));
        if (r.ok) {
          const counts = `${r.checked.files} files, ${r.checked.ledger_entries} ledger entries, ${r.checked.endpoint_entries} endpoint entries, ${r.checked.manifests} manifests; ${r.checked.receipts_cross_checked} receipts cross-checked, ${r.checked.transcript_bound} transcript lines bound`;
          if (!o.json && r.status === 'verified') print(`ok: ${dir} verifies (${counts})`);
          if (!o.json && r.status === 'partial')
            print(`partial ${ErrorCode.EVIDENCE_PARTIAL}: ${dir}: every chain recomputes (${counts}); ${uncovered(r)}`);
          if (!o.json) printCaveats(r);
          if (!o.json) printDeviations(r.deviations);
          // Exit 3: nothing is broken, but the package does not prove everything it records.
          if (r.status === 'partial') process.exitCode = 3;
        } else {
          const f = r.first;
          process.stderr.write(
            `error ${r.code}: ${f?.file ?? '?'} seq ${f?.seq ?? '-'} (${f?.reason ?? '?'}${f?.detail ? `: ${f.detail}` : ''}); ${r.problems.length} problem(s)\n`,
          );
          process.exitCode = 1;
        }
        if (o.record) {
          await withLedger(o.db, (_db, l) =>
            l.append({
              kind: 'evidence.verify',
              dir,
              ok: r.ok,
              status: r.status,
              ...(r.coverage ? { coverage: r.coverage } : {}),
              ...(r.first ? { break: r.first } : {}),
              ...(r.deviations.length ? { deviations: r.deviations } : {}),
              checked: r.checked,
              ...(r.anchor ? { anchor: r.anchor } : {}),
            }),
          );
        }
      },
    );

  anchorCommands(cmd, dbOpt, withLedger);

  cmd
    .command('checkpoint')
    .description('Append a checkpoint sealing the current head (retention may prune up to it)')
    .option(...dbOpt)
    .action(async (o: { db?: string }) => {
      await withLedger(o.db, async (_db, l) => {
        const e = await l.checkpoint({ reason: 'operator' });
        print(`checkpoint at seq ${e.seq} sealing seq ${e.seq - 1}`);
      });
    });

  cmd
    .command('prune')
    .description('Delete entries before the latest checkpoint at or before --before-seq (HOST-056)')
    .option(...dbOpt)
    .requiredOption('--before-seq <seq>', 'prune up to the latest checkpoint with seq <= this', int)
    .option('--min-age-s <seconds>', 'refuse when that checkpoint is younger (receipt retention)', int)
    .action(async (o: { db?: string; beforeSeq: number; minAgeS?: number }) => {
      await withLedger(o.db, async (db, l) => {
        const retention = o.minAgeS === undefined ? undefined : { clock: new RealClock(), minAgeMs: o.minAgeS * 1000 };
        const r = await pruneLedger(db, l, o.beforeSeq, retention);
        print(`pruned ${r.pruned} entries; ledger now starts at checkpoint seq ${r.checkpoint.seq}`);
        const v = await l.verify();
        if (!v.ok) throw new HostError(ErrorCode.EVIDENCE_CHAIN_BROKEN, 'ledger does not verify after prune', { ...v });
      });
    });

  cmd
    .command('status')
    .description('Probe the store and print whether the ledger can be written (HOST-093)')
    .option(...dbOpt)
    .action(async (o: { db?: string }) => {
      await withLedger(o.db, async (db, l) => {
        const s = await l.probe();
        const v = await l.verify();
        print(JSON.stringify({ location: db.location, dialect: db.dialect, ...s, chain: v }));
        if (s.state !== 'available') process.exitCode = 1;
      });
    });

  cmd
    .command('gates')
    .description('List the device gates held in the store (HOST-091) and whether each owning host process is running')
    .option(...dbOpt)
    .option('--endpoint <id>', 'only the gates of this endpoint id')
    .action(async (o: { db?: string; endpoint?: string }) => {
      await withLedger(o.db, async (_db, l) => {
        const gates = await l.deviceGates(o.endpoint);
        for (const g of gates) {
          // true/false by pid on this machine, by lease elsewhere; null: no lease here, nobody can tell.
          print(JSON.stringify({ ...g, owner_running: await l.ownerRunning(g.owner) }));
        }
        process.stderr.write(`${gates.length} device gate(s) shut\n`);
      });
    });

  return cmd;
}

/** Names each endpoint conformance deviation of an intact chain (issue 16); a warning, not a failure. */
function printDeviations(deviations: readonly PackageDeviation[]): void {
  for (const d of deviations) print(`warning ${d.code}: endpoint ${d.endpoint_id} ${d.file} seq ${d.seq}: ${d.detail}`);
}

/** What a partial package did not cover, in words (issue 21). */
function uncovered(r: PackageVerification): string {
  const c = r.coverage;
  if (!c) return 'coverage unknown';
  const parts: string[] = [];
  if (c.receipts_unchecked)
    parts.push(`${c.receipts_unchecked} of ${c.receipts} host receipt(s) not matched to endpoint evidence`);
  if (c.endpoints_without_bundle.length)
    parts.push(`no evidence bundle for endpoint(s) ${c.endpoints_without_bundle.join(', ')}`);
  if (c.pruned_unchecked) parts.push(`${c.pruned_unchecked} item(s) whose recording entries were pruned`);
  if (c.transcript_unbound) parts.push(`${c.transcript_unbound} transcript line(s) bound to nothing`);
  return `not covered: ${parts.join('; ')}`;
}

/** What a verified package still leaves open, in words (HOST-055, issue 20). */
function printCaveats(r: PackageVerification): void {
  const c = r.checked;
  if (!r.anchor) print('note: no --anchor given: a package re-sealed from scratch would verify too');
  else if (r.anchor.signature === 'valid')
    print('note: the anchor is signed, but by a key you did not pin (--public-key)');
  if (c.receipts_unreconciled)
    print(`note: ${c.receipts_unreconciled} endpoint receipt(s) of commands the host recorded as unknown`);
}
