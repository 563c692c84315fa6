import { Command } from 'commander';
import { toHostError } from '../core/index.js';

/**
 * Each subcommand lives in its own file, loaded only when it runs: a simulator child or a one-shot
 * command does not pay for loading the server, the engine and the MCP client (startup time matters
 * for every spawned endpoint). Add a command with one line here.
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  demo: async () => (await import('./demo-command.js')).demoCommand(),
  invoke: async () => (await import('./invoke-command.js')).invokeCommand(),
  'run-task': async () => (await import('./run-task-command.js')).runTaskCommand(),
  endpoints: async () => (await import('./endpoints-command.js')).endpointsCommand(),
  ledger: async () => (await import('./ledger-command.js')).ledgerCommand(),
  token: async () => (await import('./token-command.js')).tokenCommand(),
  sim: async () => (await import('./sim-command.js')).simCommand(),
  serve: async () => (await import('./serve-command.js')).serveCommand(),
  run: async () => (await import('./run-command.js')).runCommand(),
};

async function main(argv: string[]): Promise<void> {
  const program = new Command('mhs-host')
    .description('Orchestration engine for MHS endpoints (MHS-Host CL5) and OpenWOP workflows')
    .version('0.1.0');
  const wanted = argv.slice(2).find((a) => !a.startsWith('-'));
  const names = wanted && wanted in COMMANDS ? [wanted] : Object.keys(COMMANDS);
  for (const name of names) program.addCommand(await COMMANDS[name]!());
  await program.parseAsync(argv);
}

main(process.argv).catch((err: unknown) => {
  const e = toHostError(err);
  process.stderr.write(`error ${e.code}: ${e.message}\n`);
  if (e.remediation) process.stderr.write(`  ${e.remediation}\n`);
  process.exitCode = 1;
});
