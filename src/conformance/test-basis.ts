/**
 * What a test file exercises (HOST-001, 002; issue 22 item 5): the host, or only the bundled simulator. Derived
 * mechanically from the test's source and the test modules it imports, never from a hand list:
 *
 * - a value import (not `import type`) of a module under `src/` or `machines/`, other than `src/sim/` and
 *   `src/core/` (the vocabulary both share), exercises the host; one under `src/sim/` exercises the simulator;
 * - a child started with `entryArgs('src/...')` counts the same way, and a fixture child under `test/` is read too;
 * - `cliEntry()` starts the `mhs-host` CLI: the host, unless its first argument is the `sim` subcommand;
 * - an imported test module (helpers) counts as what it exercises, transitively.
 *
 * The module that defines `cliEntry`/`entryArgs` names entry points and starts nothing itself.
 */
import { dirname, join, normalize, relative } from 'node:path';

/** What a test file exercises. `other`: neither (e.g. pure `src/core` or test-tooling tests). */
export type TestBasis = 'host' | 'simulator' | 'other';

/** Reads a file relative to the repository root; undefined when it does not exist. */
export type SourceReader = (repoPath: string) => string | undefined;

const IMPORT =
  /(?:^|[;\n])\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]|(?:^|[;\n])\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
const ENTRY_ARGS = /\bentryArgs\(\s*['"]([^'"]+)['"]/g;
const CLI_ENTRY = /\bcliEntry\(\)/g;

/** Whether an import clause brings in a value (not only types). */
function importsValue(typeKeyword: string | undefined, clause: string): boolean {
  if (typeKeyword) return false;
  const named = /^\{([\s\S]*)\}$/.exec(clause.trim());
  if (!named) return true; // default, namespace or `export *`
  const names = named[1]!
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return names.some((n) => !n.startsWith('type '));
}

/** What a module of the repository is: host code (`src/`, `machines/`), the simulator, or shared vocabulary. */
function kindOfSource(path: string): TestBasis | undefined {
  if (path.startsWith('src/sim/')) return 'simulator';
  if (path.startsWith('src/core/')) return 'other';
  if (path.startsWith('src/') || path.startsWith('machines/')) return 'host';
  return undefined;
}

function combine(a: TestBasis, b: TestBasis): TestBasis {
  if (a === 'host' || b === 'host') return 'host';
  if (a === 'simulator' || b === 'simulator') return 'simulator';
  return 'other';
}

/** Classifies test files, caching each module it reads. */
export class TestBasisReader {
  private readonly memo = new Map<string, TestBasis>();

  constructor(private readonly read: SourceReader) {}

  /** What the test file at `repoPath` (e.g. `test/engine/cli.test.ts`) exercises. */
  of(repoPath: string): TestBasis {
    return this.module(normalize(repoPath));
  }

  private module(path: string): TestBasis {
    const known = this.memo.get(path);
    if (known) return known;
    this.memo.set(path, 'other'); // an import cycle adds nothing
    const text = this.read(path);
    if (text === undefined) return 'other';
    let basis: TestBasis = 'other';
    const target = (spec: string): TestBasis => {
      if (!spec.startsWith('.')) return 'other'; // packages
      const p = normalize(join(dirname(path), spec)).replace(/\.js$/, '.ts');
      return kindOfSource(p) ?? (p.startsWith('test/') ? this.module(p) : 'other');
    };
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[4] ?? m[5] ?? m[6];
      if (!spec) continue;
      if (m[4] && !importsValue(m[2], m[3] ?? '')) continue;
      basis = combine(basis, target(spec));
    }
    const definesEntries = /export function (?:cliEntry|entryArgs)\b/.test(text);
    if (!definesEntries) {
      for (const m of text.matchAll(ENTRY_ARGS)) {
        const p = normalize(m[1]!);
        basis = combine(basis, kindOfSource(p) ?? (p.startsWith('test/') ? this.module(p) : 'other'));
      }
      for (const m of text.matchAll(CLI_ENTRY)) {
        const after = text.slice(m.index + m[0].length, m.index + m[0].length + 40);
        basis = combine(basis, /^\.args\s*,\s*['"]sim['"]/.test(after) ? 'simulator' : 'host');
      }
    }
    this.memo.set(path, basis);
    return basis;
  }
}

/** The repository path of a test file as vitest names it (absolute, or already relative to `root`). */
export function repoPathOf(file: string, root: string): string {
  return file.startsWith('/') ? relative(root, file) : file;
}
