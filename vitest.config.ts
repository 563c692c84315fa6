import { defineConfig } from 'vitest/config';
import { compiledSources } from './test/compiled-sources.js';
import { DurationSequencer } from './test/duration-sequencer.js';

export default defineConfig({
  plugins: [compiledSources()],
  test: {
    include: ['test/**/*.test.ts'],
    // Compiles what test child processes run once (test/helpers/cli-entry.ts), instead of tsx at each spawn.
    globalSetup: ['test/global-setup.ts'],
    // Test files import src/ and machines/ from that build too (test/compiled-sources.ts): loaded by Node itself.
    server: { deps: { external: [/\/node_modules\//, /\/\.test-build\//] } },
    // Hosts in tests (and their children) re-read a pending approval decided by another process every
    // 100 ms instead of 2 s (docs/operator.md); what they wait for and decide is unchanged.
    env: { MHS_APPROVAL_POLL_MS: '100' },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most files wait on child processes, sockets and deadlines rather than the CPU: on a 2-core CI machine the
    // default (cores - 1 = one worker) ran them one at a time.
    maxWorkers: 3,
    minWorkers: 1,
    // Longest files first (test/durations.json, `npm run test:durations`), so no worker ends the run alone.
    sequence: { sequencer: DurationSequencer },
  },
});
