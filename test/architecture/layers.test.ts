// Guarantees (architecture.md "Layers"): each layer imports only from layers above it in the table (core, machines,
// mhs, ledger, policy, engine, openwop, ai, gateway, server, console, conformance, cli); the simulators import only core and
// mhs, and only the CLI imports the simulators. Relative imports of every .ts file under src/ and machines/ are read.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/sim.js';

const ORDER = [
  'src/core',
  'machines',
  'src/mhs',
  'src/ledger',
  'src/policy',
  'src/engine',
  'src/openwop',
  'src/ai',
  'src/gateway',
  'src/server',
  'src/console',
  'src/conformance',
  'src/cli',
];

function layerOf(path: string): number | 'sim' | undefined {
  if (path.startsWith('src/sim/')) return 'sim';
  const i = ORDER.findIndex((l) => path.startsWith(`${l}/`));
  return i < 0 ? undefined : i;
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return files(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

/** `[importer, imported]` pairs that break the layer order. */
function violations(): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const abs of [...files(join(REPO_ROOT, 'src')), ...files(join(REPO_ROOT, 'machines'))]) {
    const file = relative(REPO_ROOT, abs);
    const me = layerOf(file);
    for (const m of readFileSync(abs, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
      const target = normalize(join(dirname(file), m[1]!));
      const them = layerOf(target);
      if (them === undefined || me === undefined) continue;
      const ok =
        me === 'sim'
          ? them === 'sim' || them === 0 || them === 2
          : them === 'sim'
            ? me === ORDER.length - 1
            : them <= me;
      if (!ok) out.push([file, target]);
    }
  }
  return out;
}

describe('layers', () => {
  it('no module imports from a layer listed after its own, and only the CLI reaches the simulators', () => {
    expect(violations()).toEqual([]);
  });

  it('the check sees the files it guards', () => {
    // Guards the guard: a broken walk (no files, no imports) would pass the test above vacuously.
    const engine = readFileSync(join(REPO_ROOT, 'src/engine/engine.ts'), 'utf8');
    expect(engine).toMatch(/from '\.\.\/core\/index\.js'/);
    expect(files(join(REPO_ROOT, 'src')).length).toBeGreaterThan(100);
  });
});
