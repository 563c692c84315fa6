import { generateKeyPairSync } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { ErrorCode, HostError, RealClock, isoAt, jcs } from '../core/index.js';
import { makeAnchor, parseAnchor } from '../ledger/index.js';
import type { Db, DurableLedger, VerifyOptions } from '../ledger/index.js';

type WithLedger = <T>(dbFlag: string | undefined, fn: (db: Db, l: DurableLedger) => Promise<T>) => Promise<T>;

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `cannot read ${what} ${path}: ${(err as Error).message}`, {
      path,
    });
  }
}

/** Writes a file that must not exist yet: an anchor or key is never overwritten by accident. */
async function writeNew(path: string, text: string, mode?: number): Promise<void> {
  try {
    await writeFile(path, text, { flag: 'wx', ...(mode !== undefined ? { mode } : {}) });
  } catch (err) {
    throw new HostError(
      ErrorCode.HOST_OUTPUT_UNWRITABLE,
      `cannot write ${path}: ${(err as Error).message}`,
      { path },
      { remediation: 'Pick a path that does not exist yet in a writable folder.', cause: err },
    );
  }
}

/** A signing key file's text. */
export function readKey(path: string): Promise<string> {
  return readText(path, 'the signing key');
}

/** Writes the anchor of an exported package (`ledger export --anchor-out`): its head and `manifest_sha256`. */
export async function writePackageAnchor(
  path: string,
  m: { ledger: { head_seq: number; head_digest: string }; manifest_sha256: string; created_at: string },
  key?: string,
): Promise<void> {
  const anchor = makeAnchor(
    { seq: m.ledger.head_seq, digest: m.ledger.head_digest },
    m.created_at,
    key,
    m.manifest_sha256,
  );
  await writeNew(path, `${jcs(anchor)}\n`);
  process.stdout.write(
    `anchor written to ${path}${anchor.signature ? ' (signed)' : ''}: keep it outside the package\n`,
  );
}

/** `--anchor` / `--public-key` of `ledger verify`, read from their files. */
export async function readAnchorOptions(o: { anchor?: string; publicKey?: string }): Promise<VerifyOptions> {
  return {
    ...(o.anchor ? { anchor: parseAnchor(await readText(o.anchor, 'the anchor')) } : {}),
    ...(o.publicKey ? { publicKeyPem: await readText(o.publicKey, 'the public key') } : {}),
  };
}

/**
 * `mhs-host ledger head` and `ledger keygen` (issue 20, HOST-055): the ledger's head as an anchor to keep outside
 * any package, optionally signed with an operator's Ed25519 key.
 */
export function anchorCommands(cmd: Command, dbOpt: readonly [string, string], withLedger: WithLedger): void {
  cmd
    .command('head')
    .description('Print the ledger head as an anchor to keep elsewhere; a later package must hold it')
    .option(dbOpt[0], dbOpt[1])
    .option('--sign-key <pem>', 'sign the anchor with this Ed25519 private key (PEM)')
    .option('--out <file>', 'also write the anchor to this new file')
    .action(async (o: { db?: string; signKey?: string; out?: string }) => {
      const key = o.signKey ? await readKey(o.signKey) : undefined;
      const head = await withLedger(o.db, (_db, l) => l.head());
      const anchor = makeAnchor(head, isoAt(new RealClock().now()), key);
      if (o.out) await writeNew(o.out, `${jcs(anchor)}\n`);
      process.stdout.write(`head seq ${anchor.seq} digest ${anchor.digest}${anchor.signature ? ' (signed)' : ''}\n`);
      if (o.out) process.stdout.write(`anchor written to ${o.out}: keep it outside the package\n`);
    });

  cmd
    .command('keygen')
    .description('Write a new Ed25519 key pair for signing anchors (PEM; the private key mode 0600)')
    .requiredOption('--private <file>', 'new file for the private key')
    .requiredOption('--public <file>', 'new file for the public key (give this to reviewers)')
    .action(async (o: { private: string; public: string }) => {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      await writeNew(o.private, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 0o600);
      await writeNew(o.public, publicKey.export({ type: 'spki', format: 'pem' }).toString());
      process.stdout.write(`wrote ${o.private} (private, keep it secret) and ${o.public} (public)\n`);
    });
}
