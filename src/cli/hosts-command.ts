import { Command } from 'commander';
import { RealClock } from '../core/index.js';
import { openDb, resolveDbLocation } from '../ledger/index.js';
import { hostsView } from '../server/hosts-route.js';
import type { HostProcessView } from '../server/hosts-route.js';

function render(list: readonly HostProcessView[]): string {
  if (!list.length) return 'no host process holds a lease in this store\n';
  const lines = list.map((p) => {
    const state = p.running === null ? 'unknown' : p.running ? 'running' : 'gone';
    const lease = p.host_lease ? ` host lease until ${p.host_lease.expires_at}` : '';
    const runs = p.runs.map((r) => `\n  ${r.run_id} token ${r.token} until ${r.expires_at}`).join('');
    const eps = p.endpoints
      .map((e) => `\n  endpoint ${e.endpoint_id ?? '?'} (${e.connector_id}) token ${e.token} until ${e.expires_at}`)
      .join('');
    return `${p.owner}  ${state}  ${p.runs.length} run(s) ${p.endpoints.length} endpoint(s)${lease}${runs}${eps}`;
  });
  return `${lines.join('\n')}\n`;
}

/**
 * `mhs-host hosts [--db LOCATION] [--json]`: the host processes of a store (issue 19): each process with a host or
 * run lease, whether it is running, the runs it drives and the endpoints it attaches with their fencing tokens.
 * Read-only.
 */
export function hostsCommand(): Command {
  return new Command('hosts')
    .description('List the host processes of the store, their leases and the runs each drives')
    .option(
      '--db <location>',
      'store: SQLite file path or postgres:// URL (default: $MHS_HOST_DB or ./.mhs-host/host.db)',
    )
    .option('--json', 'print JSON')
    .action(async (opts: { db?: string; json?: boolean }) => {
      const db = await openDb(resolveDbLocation({ flag: opts.db }));
      try {
        const processes = await hostsView(db, new RealClock(), null);
        process.stdout.write(opts.json ? `${JSON.stringify({ processes }, null, 2)}\n` : render(processes));
      } finally {
        await db.close();
      }
    });
}
