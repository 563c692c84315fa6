import { Command } from 'commander';
import { ErrorCode, HostError } from '../core/index.js';
import type { OperatorRuntime } from '../engine/operator-runtime.js';
import { APPROVAL_STATUSES } from '../policy/index.js';
import type { ApprovalRequest, ApprovalStatus } from '../policy/index.js';
import { describeApproval } from './approval-prompt.js';
import { approvalIdArg, badFlag } from './cli-runtime.js';
import { dbOption, operatorPrincipal, withOperator } from './operator-cli.js';

export { operatorPrincipal };

const STATUSES: readonly ApprovalStatus[] = APPROVAL_STATUSES;

function statusFilter(v: string): ApprovalStatus[] | undefined {
  if (v === 'all') return undefined;
  const list = v.split(',').map((s) => s.trim());
  if (list.some((s) => !STATUSES.includes(s as ApprovalStatus)))
    throw badFlag('--status', `expected "all" or a list of ${STATUSES.join(', ')}`, { value: v });
  return list as ApprovalStatus[];
}

function oneLine(a: ApprovalRequest): string {
  const votes = a.principals_needed === 2 ? ` ${a.votes.length}/2` : '';
  return [
    a.approval_id,
    `${a.status}${votes}`.padEnd(10),
    a.risk_class,
    a.method.padEnd(13),
    `${a.endpoint_id} ${a.device_id} ${a.capability_id}`,
    a.input_digest.slice(0, 12),
    a.created_at,
  ].join('  ');
}

async function requireApproval(rt: OperatorRuntime, id: string): Promise<ApprovalRequest> {
  const a = await rt.services.gate.get(id);
  if (!a) throw new HostError(ErrorCode.NOT_FOUND, `no approval ${id}`, { approval_id: id });
  return a;
}

function show(a: ApprovalRequest): string[] {
  const lines = [`approval ${a.approval_id}: ${a.status}`, ...describeApproval(a)];
  lines.push(`  created     ${a.created_at}${a.run_id ? ` (run ${a.run_id}, node ${a.node_id})` : ''}`);
  for (const v of a.votes) lines.push(`  approved by ${v.principal.name || v.principal.id} at ${v.at}`);
  if (a.decided_at) lines.push(`  decided     ${a.decided_at}${a.reason ? ` (${a.reason})` : ''}`);
  return lines;
}

async function decide(
  id: string,
  decision: 'approve' | 'deny',
  flags: { db?: string; operator?: string; reason?: string },
): Promise<void> {
  const principal = operatorPrincipal(flags.operator);
  await withOperator(flags.db, async (rt) => {
    // The same vote the console and `POST /v1/operator/approvals/:id/approve|deny` apply: recorded in the
    // ledger with the operator before it counts; dual control needs a second, distinct operator.
    const vote = { principal, decision, ...(flags.reason ? { reason: flags.reason } : {}) };
    const next = await rt.services.gate.vote(id, vote);
    const out =
      next.status === 'pending'
        ? `approval ${id}: ${next.votes.length} of ${next.principals_needed} approvals (${principal.id}); a second, distinct operator must approve`
        : `approval ${id}: ${next.status} by ${principal.id}${decision === 'approve' ? '; the waiting call proceeds' : ''}`;
    process.stdout.write(`${out}\n`);
  });
}

/**
 * `mhs-host approvals list | show <id> | approve <id> | deny <id>`: the operator's approval surface on the
 * command line, over the same operator services as the HTTP operator API and the console (issue 6).
 */
export function approvalsCommand(): Command {
  const cmd = new Command('approvals').description('List and decide approval requests (operator actions)');
  cmd
    .command('list')
    .description('List approval requests (default: pending)')
    .addOption(dbOption())
    .option('--status <list>', `"all" or a comma list of ${STATUSES.join(', ')}`, 'pending')
    .option('--json', 'print JSON')
    .action(async (flags: { db?: string; status: string; json?: boolean }) => {
      const status = statusFilter(flags.status);
      await withOperator(flags.db, async (rt) => {
        const list = await rt.services.gate.list(status ? { status } : {});
        if (flags.json) return void process.stdout.write(`${JSON.stringify({ approvals: list }, null, 2)}\n`);
        if (!list.length) return void process.stdout.write(`no ${flags.status} approvals\n`);
        process.stdout.write(`${list.map(oneLine).join('\n')}\n`);
      });
    });
  cmd
    .command('show')
    .description('Show one approval request: what it approves, its input and digest, its votes')
    .argument('<id>', 'approval id (apr_...)', approvalIdArg)
    .addOption(dbOption())
    .option('--json', 'print JSON')
    .action(async (id: string, flags: { db?: string; json?: boolean }) => {
      await withOperator(flags.db, async (rt) => {
        const a = await requireApproval(rt, id);
        process.stdout.write(flags.json ? `${JSON.stringify(a, null, 2)}\n` : `${show(a).join('\n')}\n`);
      });
    });
  for (const decision of ['approve', 'deny'] as const)
    cmd
      .command(decision)
      .description(
        decision === 'approve'
          ? 'Approve a pending request as an operator (dual control: a second, distinct operator completes it)'
          : 'Deny a pending request as an operator',
      )
      .argument('<id>', 'approval id (apr_...)', approvalIdArg)
      .addOption(dbOption())
      .option('--operator <id>', 'your operator identity, recorded in the ledger (or MHS_OPERATOR)')
      .option('--reason <text>', 'reason recorded with the decision')
      .action((id: string, flags: { db?: string; operator?: string; reason?: string }) => decide(id, decision, flags));
  return cmd;
}
