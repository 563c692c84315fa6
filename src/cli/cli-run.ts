import { Command, CommanderError } from 'commander';
import { ErrorCode, HostError } from '../core/index.js';
import { cliError, guardStdout } from './cli-errors.js';

/** Subcommands by name, each loaded only when it runs. */
export type CommandTable = Record<string, () => Promise<Command>>;

/**
 * Runs the `mhs-host` CLI over `commands` (main.ts: all of them; sim-main.ts: `sim` alone). Errors print as
 * `error <code>: <message>` with exit code 1.
 */
export function runCli(argv: string[], commands: CommandTable): void {
  main(argv, commands).catch((err: unknown) => {
    const e = cliError(err);
    process.stderr.write(`error ${e.code}: ${e.message}\n`);
    if (e.remediation) process.stderr.write(`  ${e.remediation}\n`);
    process.exitCode = 1;
  });
}

async function main(argv: string[], commands: CommandTable): Promise<void> {
  const program = new Command('mhs-host')
    .description(
      'Orchestration engine for MHS endpoints (an MHS-009 host: `conformance report` says which level holds) and OpenWOP workflows',
    )
    .version('0.1.0');
  const wanted = argv.slice(2).find((a) => !a.startsWith('-'));
  guardStdout(process.stdout, (code) => process.exit(code), wanted === 'serve' ? 'ignore' : 'exit');
  const names = wanted && wanted in commands ? [wanted] : Object.keys(commands);
  for (const name of names) program.addCommand(await commands[name]!());
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
