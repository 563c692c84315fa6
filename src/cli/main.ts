import { Command } from 'commander';
import { HostError, toHostError } from '../core/index.js';

const program = new Command('mhs-host')
  .description('Orchestration engine for MHS endpoints (MHS-Host CL5) and OpenWOP workflows')
  .version('0.1.0');

program
  .command('demo')
  .description('Run the main job on the bundled simulators with the embedded SQLite store')
  .action(() => {
    throw new HostError('MHS.HOST.ADAPTER_MISSING', 'the demo task needs the simulators (issue 2)');
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  const e = toHostError(err);
  process.stderr.write(`error ${e.code}: ${e.message}\n`);
  process.exitCode = 1;
});
