// Guarantees: every MUST of mhs-wire.md §2-§9 holds for each bundled device family when a real MCP
// client (pinned to 2026-07-28) talks to the simulator over Streamable HTTP in a child process.
import { BUILTIN_FAMILIES } from '../../src/sim/family.js';
import { defineContractSuite } from './contract-suite.js';

for (const family of BUILTIN_FAMILIES) defineContractSuite('http', family);
