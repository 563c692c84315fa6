// Guarantees (HOST-020): the host's MHS layer (discovery, connector, admission, presentation) and the
// connector/enablement policy code never name a device family, vendor or simulator: every
// device-specific fact comes from the manifest. The family names are read from the simulator's own
// data files, so a new family is covered automatically.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/sim.js';

const families = readdirSync(join(REPO_ROOT, 'src/sim/devices'))
  .filter((f) => f.endsWith('.json'))
  .flatMap((f) => {
    const def = JSON.parse(readFileSync(join(REPO_ROOT, 'src/sim/devices', f), 'utf8')) as {
      family: string;
      device: { device_id: string };
    };
    return [def.family, def.device.device_id];
  });

const hostFiles = [
  ...readdirSync(join(REPO_ROOT, 'src/mhs'))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join('src/mhs', f)),
  'src/policy/connector-store.ts',
  'src/policy/enablement.ts',
  'src/cli/endpoints-command.ts',
];

describe('HOST-020: one code path for every device', () => {
  it('knows the simulator families it must not mention', () => {
    expect(families.length).toBeGreaterThanOrEqual(4);
  });
  for (const file of hostFiles)
    it(`${file} names no device family or simulator`, () => {
      const text = readFileSync(join(REPO_ROOT, file), 'utf8').toLowerCase();
      for (const name of [...new Set(families)])
        expect(text.includes(name.toLowerCase()), `${file} mentions ${name}`).toBe(false);
      expect(/from ['"]\.\.\/sim\//.test(text), `${file} imports the simulator`).toBe(false);
    });
});
