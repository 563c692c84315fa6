/**
 * `mhs-host sim` alone: the entry of the simulator bundle `npm run build` makes (dist/src/sim/sim-bundle.js,
 * src/build/sim-bundle.ts), which bin/mhs-host.js starts for `sim` so a stdio endpoint child loads one file.
 */
import { runCli } from './cli-run.js';

runCli(process.argv, { sim: async () => (await import('./sim-command.js')).simCommand() });
