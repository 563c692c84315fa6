import { Command } from 'commander';
import { toHostError } from '../core/index.js';
import { demoCommand } from './demo-command.js';
import { invokeCommand } from './invoke-command.js';
import { runTaskCommand } from './run-task-command.js';
import { endpointsCommand } from './endpoints-command.js';
import { ledgerCommand } from './ledger-command.js';
import { simCommand } from './sim-command.js';
import { tokenCommand } from './token-command.js';
import { serveCommand } from './serve-command.js';
import { runCommand } from './run-command.js';

// Each subcommand lives in its own file and is added here with one line.
const program = new Command('mhs-host')
  .description('Orchestration engine for MHS endpoints (MHS-Host CL5) and OpenWOP workflows')
  .version('0.1.0')
  .addCommand(demoCommand())
  .addCommand(invokeCommand())
  .addCommand(runTaskCommand())
  .addCommand(endpointsCommand())
  .addCommand(ledgerCommand())
  .addCommand(tokenCommand())
  .addCommand(simCommand())
  .addCommand(serveCommand())
  .addCommand(runCommand());

program.parseAsync(process.argv).catch((err: unknown) => {
  const e = toHostError(err);
  process.stderr.write(`error ${e.code}: ${e.message}\n`);
  if (e.remediation) process.stderr.write(`  ${e.remediation}\n`);
  process.exitCode = 1;
});
