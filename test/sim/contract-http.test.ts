// Guarantees: every MUST of mhs-wire.md §2-§9 holds for each bundled device family when a real MCP
// client (pinned to 2026-07-28) talks to the simulator over Streamable HTTP in a child process.
import { afterAll } from 'vitest';
import { BUILTIN_FAMILIES } from '../../src/sim/family.js';
import { startSimHttp } from '../helpers/sim.js';
import { CONTRACT_FLAGS, defineContractSuite } from './contract-suite.js';

// One sim per family, all started at once (process start dominates; the walks then run in order).
const sims = BUILTIN_FAMILIES.map((f) => {
  const p = startSimHttp(f, CONTRACT_FLAGS);
  p.catch(() => undefined);
  return [f, p] as const;
});
for (const [family, started] of sims) defineContractSuite('http', family, started);
afterAll(async () => {
  await Promise.all(sims.map(async ([, p]) => (await p.catch(() => null))?.stop()));
});
