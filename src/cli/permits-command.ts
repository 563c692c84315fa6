import { Command } from 'commander';
import type { HostPermit } from '../policy/permits.js';
import { dbOption, operatorPrincipal, withOperator } from './operator-cli.js';
import { badFlag } from './cli-runtime.js';

function oneLine(p: HostPermit): string {
  return [p.permit_id, p.state.padEnd(8), `${p.endpoint_id} ${p.device_id} ${p.capability_id}`, p.expires_at].join(
    '  ',
  );
}

/** `mhs-host permits list | revoke <permit_id>` (issue 18 item 6; HOST-047: operators see and revoke permits). */
export function permitsCommand(): Command {
  const cmd = new Command('permits').description('List and revoke permits (operator actions)');
  cmd
    .command('list')
    .description('List outstanding permits (issued, not used, not expired); --all for every one')
    .option('--all', 'every permit, whatever its state')
    .option('--json', 'print JSON')
    .addOption(dbOption())
    .action(async (o: { all?: boolean; json?: boolean; db?: string }) => {
      await withOperator(o.db, async (rt) => {
        const list = await rt.services.permits.list(o.all ? { all: true } : {});
        if (o.json) return void process.stdout.write(`${JSON.stringify({ permits: list }, null, 2)}\n`);
        if (!list.length) return void process.stdout.write(o.all ? 'no permits\n' : 'no outstanding permits\n');
        process.stdout.write(`${list.map(oneLine).join('\n')}\n`);
      });
    });
  cmd
    .command('revoke')
    .description('Revoke a permit: it is never sent afterwards (HOST-047, 070); recorded in the ledger')
    .argument('<permit_id>', 'prm_...')
    .option('--operator <id>', 'your operator identity, recorded in the ledger (or MHS_OPERATOR)')
    .option('--reason <text>', 'reason recorded with the revocation')
    .addOption(dbOption())
    .action(async (id: string, o: { operator?: string; reason?: string; db?: string }) => {
      if (!/^prm_[0-9A-HJKMNP-TV-Z]{26}$/.test(id))
        throw badFlag('<permit_id>', 'expected a permit id (prm_...)', { value: id });
      const who = operatorPrincipal(o.operator);
      await withOperator(o.db, async (rt) => {
        const p = await rt.services.permits.revoke(id, { id: who.id, name: who.name }, o.reason);
        process.stdout.write(`revoked ${p.permit_id} (${p.state})\n`);
      });
    });
  return cmd;
}
