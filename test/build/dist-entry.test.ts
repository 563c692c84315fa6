// Guarantees (issue 21 item 6): `bin/mhs-host.js` runs the compiled tree that `npm run build` (buildDist) made
// while it matches the sources, and the TypeScript sources through tsx when there is no build, when a source was
// edited, added or removed since, or when MHS_DEV_TSX=1. Checked on a small repository of the same layout (the
// real bin/, scripts/ and console sources copied, this checkout's node_modules linked), so the real checkout is
// left alone.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { buildDist } from '../../src/build/dist-build.js';
import { REPO_ROOT } from '../helpers/cli-entry.js';

const root = mkdtempSync(join(tmpdir(), 'mhs-dist-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function write(rel: string, text: string): void {
  mkdirSync(join(root, rel, '..'), { recursive: true });
  writeFileSync(join(root, rel), text);
}

/** What the CLI entry of the small repository prints: which tree ran. */
function run(env: Record<string, string> = {}): string {
  return execFileSync(process.execPath, [join(root, 'bin/mhs-host.js')], {
    cwd: root,
    env: { ...process.env, MHS_DEV_TSX: '', ...env },
    encoding: 'utf8',
  }).trim();
}

describe('bin/mhs-host.js runs dist/ only while it is current', () => {
  test('no build: sources; built: compiled; edited, added or removed source: sources; MHS_DEV_TSX=1: sources', async () => {
    for (const dir of ['bin', 'scripts', 'src/console/ui'])
      cpSync(join(REPO_ROOT, dir), join(root, dir), { recursive: true });
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
    write('package.json', '{"type":"module"}\n');
    write('tsconfig.json', '{}\n');
    // `import.meta.url` tells the two trees apart: dist/src/cli/main.js or src/cli/main.ts.
    write(
      'src/cli/main.ts',
      "const where: string = import.meta.url.includes('/dist/') ? 'compiled' : 'sources';\nprocess.stdout.write(where);\n",
    );
    write('machines/m.ts', 'export const m = 1;\n');
    for (const dir of ['src/sim/devices', 'src/console/static', 'vendor', 'workflows', 'prompts'])
      mkdirSync(join(root, dir), { recursive: true });

    expect(run()).toBe('sources');
    await buildDist(root);
    expect(run()).toBe('compiled');
    expect(run({ MHS_DEV_TSX: '1' })).toBe('sources');

    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, 'machines/m.ts'), later, later);
    expect(run()).toBe('sources');
    await buildDist(root);
    expect(run()).toBe('compiled');

    write('src/extra.ts', 'export {};\n');
    expect(run()).toBe('sources');
    await buildDist(root);
    expect(run()).toBe('compiled');

    unlinkSync(join(root, 'src/extra.ts'));
    expect(run()).toBe('sources');
  });
});
