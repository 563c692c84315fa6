import { Command } from 'commander';
import { HostError, ErrorCode } from '../core/index.js';

/** `mhs-host demo`: the README's main job. */
export function demoCommand(): Command {
  return new Command('demo')
    .description('Run the main job on the bundled simulators with the embedded SQLite store')
    .action(() => {
      throw new HostError(ErrorCode.HOST_ADAPTER_MISSING, 'the demo task needs the simulators (issue 2)');
    });
}
