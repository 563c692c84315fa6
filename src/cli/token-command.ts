import { Command, Option } from 'commander';
import { ErrorCode, HostError, RealClock } from '../core/index.js';
import type { Db } from '../ledger/db.js';
import { createTokenStore } from '../policy/tokens.js';
import type { TokenRole } from '../policy/tokens.js';

const DEFAULT_DB = '.mhs-host/host.db';

async function withStore<T>(dbPath: string, fn: (s: ReturnType<typeof createTokenStore>) => Promise<T>): Promise<T> {
  // Loaded lazily so `mhs-host --help` never opens a store.
  const mod = (await import('../ledger/index.js' as string).catch(() => null)) as {
    openDb?: (location: string) => Promise<Db>;
  } | null;
  if (!mod?.openDb)
    throw new HostError(ErrorCode.HOST_ADAPTER_MISSING, 'the store adapter (src/ledger openDb) is missing');
  const db = await mod.openDb(dbPath);
  try {
    return await fn(createTokenStore(db, new RealClock()));
  } finally {
    await db.close();
  }
}

const dbOption = () => new Option('--db <location>', 'store: SQLite file path or postgres:// URL').default(DEFAULT_DB);

/** `mhs-host token add|list|revoke`: API tokens for the REST and operator API (issue 6). */
export function tokenCommand(): Command {
  const cmd = new Command('token').description('Manage API bearer tokens (hashed at rest)');
  cmd
    .command('add')
    .description('Create a token and print it once')
    .argument('<name>', 'token name (the principal shown in the ledger)')
    .addOption(new Option('--role <role>', 'token role').choices(['operator', 'client']).makeOptionMandatory())
    .addOption(dbOption())
    .action(async (name: string, opts: { role: TokenRole; db: string }) => {
      const { token, id } = await withStore(opts.db, (s) => s.add(name, opts.role));
      process.stdout.write(`${token}\n`);
      process.stderr.write(`token ${id} (${name}, ${opts.role}) created; it is shown only once\n`);
    });
  cmd
    .command('list')
    .description('List tokens (never the secrets)')
    .addOption(dbOption())
    .option('--json', 'print JSON')
    .action(async (opts: { db: string; json?: boolean }) => {
      const rows = await withStore(opts.db, (s) => s.list());
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        return;
      }
      for (const r of rows) {
        process.stdout.write(
          `${r.id}\t${r.name}\t${r.role}\t${r.created_at}\t${r.revoked_at ? `revoked ${r.revoked_at}` : 'active'}\n`,
        );
      }
    });
  cmd
    .command('revoke')
    .description('Revoke a token by name or id')
    .argument('<nameOrId>')
    .addOption(dbOption())
    .action(async (nameOrId: string, opts: { db: string }) => {
      const r = await withStore(opts.db, (s) => s.revoke(nameOrId));
      process.stdout.write(`revoked ${r.id} (${r.name})\n`);
    });
  return cmd;
}
