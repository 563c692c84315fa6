// Which test files cite which HOST requirement, read from test and suite names only (`HOST-0xx: ...`; comments do
// not count, and the conformance report reads names too). Names cite one id (`HOST-091`) or several (`HOST-013/065`).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'requirements' ? [] : testFiles(p);
    return name.endsWith('.ts') ? [p] : [];
  });
}

const TITLE =
  /\b(?:it|test|describe)(?:\.(?:each|skipIf|runIf|only|concurrent|sequential)(?:\([^)]*\))?)*\(\s*(['"`])((?:(?!\1)[\s\S])*)\1/g;

/** Requirement id → the files (repository paths, run from the repository root) whose test names cite it. */
export function citingFiles(root = 'test'): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const f of testFiles(root))
    for (const t of readFileSync(f, 'utf8').matchAll(TITLE))
      for (const m of t[2]!.matchAll(/HOST-(0\d\d(?:\/0\d\d)*)/g))
        for (const n of m[1]!.split('/')) {
          const id = `HOST-${n}`;
          if (!out.has(id)) out.set(id, new Set());
          out.get(id)!.add(f);
        }
  return out;
}
