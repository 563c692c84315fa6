import { Command, CommanderError } from 'commander';
import { ErrorCode, HostError } from '../core/index.js';
import { cliError, guardStdout } from './cli-errors.js';

/**
 * Each subcommand lives in its own file, loaded only when it runs: a simulator child or a one-shot
 * command does not pay for loading the server, the engine and the MCP client (startup time matters
 * for every spawned endpoint). Add a command with one line here.
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  demo: async () => (await import('./demo-command.js')).demoCommand(),
  invoke: async () => (await import('./invoke-command.js')).invokeCommand(),
  reconcile: async () => (await import('./reconcile-command.js')).reconcileCommand(),
  'run-task': async () => (await import('./run-task-command.js')).runTaskCommand(),
  approvals: async () => (await import('./approvals-command.js')).approvalsCommand(),
  permits: async () => (await import('./permits-command.js')).permitsCommand(),
  estop: async () => (await import('./safety-command.js')).estopCommand(),
  reset: async () => (await import('./safety-command.js')).resetCommand(),
  'estop-allow': async () => (await import('./safety-command.js')).estopAllowCommand(),
  endpoints: async () => (await import('./endpoints-command.js')).endpointsCommand(),
  ledger: async () => (await import('./ledger-command.js')).ledgerCommand(),
  token: async () => (await import('./token-command.js')).tokenCommand(),
  sim: async () => (await import('./sim-command.js')).simCommand(),
  serve: async () => (await import('./serve-command.js')).serveCommand(),
  run: async () => (await import('./run-command.js')).runCommand(),
  agent: async () => (await import('./agent-command.js')).agentCommand(),
  mcp: async () => (await import('./mcp-command.js')).mcpCommand(),
  'conformance-report': async () => (await import('./conformance-command.js')).conformanceCommand(),
  conformance: async () => (await import('./conformance-command.js')).conformanceGroupCommand(),
  replay: async () => (await import('./replay-command.js')).replayCommand(),
  hosts: async () => (await import('./hosts-command.js')).hostsCommand(),
};

async function main(argv: string[]): Promise<void> {
  const program = new Command('mhs-host')
    .description(
      'Orchestration engine for MHS endpoints (an MHS-009 host: `conformance report` says which level holds) and OpenWOP workflows',
    )
    .version('0.1.0');
  const wanted = argv.slice(2).find((a) => !a.startsWith('-'));
  guardStdout(process.stdout, (code) => process.exit(code), wanted === 'serve' ? 'ignore' : 'exit');
  const names = wanted && wanted in COMMANDS ? [wanted] : Object.keys(COMMANDS);
  for (const name of names) program.addCommand(await COMMANDS[name]!());
  strictErrors(program);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    // Help and version end here (exit code as commander sets it); a bad flag or argument is a validation_error.
    if (err.exitCode === 0 || err.code.startsWith('commander.help')) return void (process.exitCode = err.exitCode);
    throw new HostError(ErrorCode.VALIDATION_ERROR, err.message.replace(/^error: /, ''), { commander: err.code });
  }
}

/** Commander errors are thrown (not printed and exited) in every subcommand, so they print like any HostError. */
function strictErrors(cmd: Command): void {
  cmd.exitOverride();
  cmd.configureOutput({ outputError: () => undefined });
  for (const sub of cmd.commands) strictErrors(sub);
}

main(process.argv).catch((err: unknown) => {
  const e = cliError(err);
  process.stderr.write(`error ${e.code}: ${e.message}\n`);
  if (e.remediation) process.stderr.write(`  ${e.remediation}\n`);
  process.exitCode = 1;
});
