// Guarantees (issue 22 item 5; HOST-001, HOST-002): every MUST requirement the suite cites is cited by at least one
// test file that exercises the host, not only the bundled simulator, so the conformance report can never count a
// requirement as passed on simulator tests alone. What a file exercises is derived from its source
// (src/conformance/test-basis.ts: value imports, child entry points, the `mhs-host` CLI and its `sim` subcommand,
// test helpers transitively), never from a hand list; the classifier itself is checked on sources given as data and
// on files of this repository whose basis is known from what they start.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOST_REQUIREMENTS, NOT_EXERCISED, SHOULD_ONLY } from '../../src/conformance/host-requirements.js';
import { TestBasisReader } from '../../src/conformance/test-basis.js';
import { REPO_ROOT } from '../helpers/cli-entry.js';
import { citingFiles } from './cited-tests.js';

const repo = new TestBasisReader((p) => {
  const f = join(REPO_ROOT, p);
  return existsSync(f) ? readFileSync(f, 'utf8') : undefined;
});

describe('HOST-001: cited MUSTs are exercised on the host', () => {
  it('HOST-001 HOST-002: every cited MUST has a citing test file that exercises the host', () => {
    const cited = citingFiles(join(REPO_ROOT, 'test'));
    const simulatorOnly = Object.keys(HOST_REQUIREMENTS)
      .filter((id) => !SHOULD_ONLY.has(id) && !(id in NOT_EXERCISED))
      .map((id) => ({
        id,
        files: [...(cited.get(id) ?? [])].map((f) => f.slice(REPO_ROOT.length).replace(/^\//, '')),
      }))
      .filter((r) => !r.files.some((f) => repo.of(f) === 'host'));
    expect(simulatorOnly).toEqual([]);
  });

  it('the classifier tells the simulator suites from the host suites of this repository', () => {
    // test/sim starts only the simulator (`mhs-host sim`, src/sim); the others drive the host.
    expect(repo.of('test/sim/policy.test.ts')).toBe('simulator');
    expect(repo.of('test/sim/endpoint.test.ts')).toBe('simulator');
    expect(repo.of('test/engine/deployment-policy.test.ts')).toBe('host');
    expect(repo.of('test/gateway/gateway-stdio.test.ts')).toBe('host');
    expect(repo.of('test/engine/session-disclosure.test.ts')).toBe('host');
  });

  it('the classifier reads value imports, entry points and helpers, not type imports', () => {
    const files: Record<string, string> = {
      'test/a.test.ts': `import type { Engine } from '../src/engine/index.js';\nimport { x } from '../src/sim/x.js';`,
      'test/b.test.ts': `import { type Engine, createEngine } from '../src/engine/index.js';`,
      'test/c.test.ts': `import { type Engine } from '../src/engine/index.js';\nimport { H } from '../src/core/index.js';`,
      'test/d.test.ts': `import { startSim } from './helpers/sim.js';`,
      'test/helpers/sim.ts': `import { cliEntry } from './cli-entry.js';\nconst a = [...cliEntry().args, 'sim'];`,
      'test/helpers/cli-entry.ts': `export function cliEntry() { return entryArgs('src/cli/main.ts'); }\nexport function entryArgs(f) {}`,
      'test/e.test.ts': `import { gw } from './helpers/gw.js';`,
      'test/helpers/gw.ts': `import { cliEntry } from './cli-entry.js';\nconst e = cliEntry();\nspawn(e.command, [...e.args, 'mcp']);`,
      'test/f.test.ts': `spawn(process.execPath, [...entryArgs('test/fixtures/child.ts')]);`,
      'test/fixtures/child.ts': `import { openLedger } from '../../src/ledger/index.js';`,
      'test/g.test.ts': `const m = await import('../machines/endpoint-session.js');`,
    };
    const r = new TestBasisReader((p) => files[p]);
    expect(r.of('test/a.test.ts')).toBe('simulator');
    expect(r.of('test/b.test.ts')).toBe('host');
    expect(r.of('test/c.test.ts')).toBe('other');
    expect(r.of('test/d.test.ts')).toBe('simulator');
    expect(r.of('test/e.test.ts')).toBe('host');
    expect(r.of('test/f.test.ts')).toBe('host');
    expect(r.of('test/g.test.ts')).toBe('host');
  });
});
