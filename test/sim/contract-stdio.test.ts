// Guarantees: every MUST of mhs-wire.md §2-§9 holds for every bundled device family when a real MCP
// client (pinned to 2026-07-28) in this process talks over stdio to ONE simulator child process that
// hosts all four families as one endpoint (the suite walks every device of the manifest).
import { BUILTIN_FAMILIES } from '../../src/sim/family.js';
import { defineContractSuite } from './contract-suite.js';

defineContractSuite('stdio', BUILTIN_FAMILIES.join(','));
