import { Command, Option } from 'commander';
import { RealClock } from '../core/index.js';
import { openDb, resolveDbLocation } from '../ledger/index.js';
import { TOKEN_ROLES, createTokenStore } from '../policy/tokens.js';
import type { TokenRole, TokenStore } from '../policy/tokens.js';

async function withStore<T>(location: string, fn: (s: TokenStore) => Promise<T>): Promise<T> {
  const db = await openDb(location);
  try {
    return await fn(createTokenStore(db, new RealClock()));
  } finally {
    await db.close();
  }
}

const dbOption = () =>
  new Option(
    '--db <location>',
    'store: SQLite file path or postgres:// URL (default: $MHS_HOST_DB or ./.mhs-host/host.db)',
  );

/** `mhs-host token add|list|revoke`: API tokens for the REST and operator API (issue 6) and the MCP gateway. */
export function tokenCommand(): Command {
  const cmd = new Command('token').description('Manage API bearer tokens (hashed at rest)');
  cmd
    .command('add')
    .description('Create a token and print it once')
    .argument('<name>', 'token name (the principal shown in the ledger)')
    .addOption(
      new Option('--role <role>', 'token role (agent: the MCP gateway only; viewer: read-only)')
        .choices([...TOKEN_ROLES])
        .makeOptionMandatory(),
    )
    .addOption(dbOption())
    .action(async (name: string, opts: { role: TokenRole; db?: string }) => {
      const { token, id } = await withStore(resolveDbLocation({ flag: opts.db }), (s) => s.add(name, opts.role));
      process.stdout.write(`${token}\n`);
      process.stderr.write(`token ${id} (${name}, ${opts.role}) created; it is shown only once\n`);
    });
  cmd
    .command('list')
    .description('List tokens (never the secrets)')
    .addOption(dbOption())
    .option('--json', 'print JSON')
    .action(async (opts: { db?: string; json?: boolean }) => {
      const rows = await withStore(resolveDbLocation({ flag: opts.db }), (s) => s.list());
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
    .action(async (nameOrId: string, opts: { db?: string }) => {
      const r = await withStore(resolveDbLocation({ flag: opts.db }), (s) => s.revoke(nameOrId));
      process.stdout.write(`revoked ${r.id} (${r.name})\n`);
    });
  return cmd;
}
