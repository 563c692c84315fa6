// Guarantees for `mhs-host endpoints` (spawned as a real CLI against a real simulator and a real
// SQLite store): `list` discovers from MHS_ENDPOINTS and endpoints.json, stores the rows disabled and
// prints source, transport, enabled, trust, claim, devices, mode and risk; malformed entries are warned
// about by source without stopping the listing; `enable --operator` is recorded in the ledger with that
// identity; `show` prints what the model is shown; `disable` turns it off again (HOST-010, 061, 066..069).
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import { connectorIdFor } from '../../src/mhs/connector-row.js';
import { cliEntry } from '../helpers/cli-entry.js';
import { REPO_ROOT, startSimHttp } from '../helpers/sim.js';
import type { SimHttp } from '../helpers/sim.js';

const run = promisify(execFile);

describe('mhs-host endpoints', () => {
  let sim: SimHttp;
  let dir: string;
  let db: string;
  let file: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    sim = await startSimHttp('laser', ['--stand-in-hardware', 'laser']);
    dir = mkdtempSync(join(tmpdir(), 'mhs-cli-'));
    db = join(dir, 'host.db');
    file = join(dir, 'endpoints.json');
    writeFileSync(file, JSON.stringify({ endpoints: [{ command: ['node', 'never-started.js', '--stdio'] }] }));
    env = { ...process.env, HOME: dir, MHS_ENDPOINTS: `${sim.url},ftp://not-an-endpoint`, MHS_HOST_DB: '' };
  });
  afterAll(async () => {
    await sim?.stop();
  });

  const cli = async (...args: string[]) => {
    try {
      const r = await run(process.execPath, [...cliEntry().args, 'endpoints', ...args], {
        cwd: REPO_ROOT,
        env,
      });
      return { code: 0, stdout: r.stdout, stderr: r.stderr };
    } catch (e) {
      const x = e as { code: number; stdout: string; stderr: string };
      return { code: x.code, stdout: x.stdout, stderr: x.stderr };
    }
  };
  const rowOf = (table: string, id: string) =>
    table
      .split('\n')
      .find((l) => l.startsWith(`${id} `))
      ?.split(/\s{2,}/);

  // Each CLI spawn starts a Node process (seconds under load), hence the generous timeout.
  it('lists, enables with a recorded operator, shows and disables', { timeout: 300_000 }, async () => {
    const laser = connectorIdFor({ endpoint_id: sim.endpointId });
    const stdio = connectorIdFor({ command: ['node', 'never-started.js', '--stdio'] });

    const listed = await cli('list', '--db', db, '--endpoints-file', file);
    expect(listed.code).toBe(0);
    expect(listed.stdout.split('\n')[0]).toMatch(
      /^CONNECTOR\s+SOURCE\s+TRANSPORT\s+ENABLED\s+TRUST\s+CLAIM\s+DEVICES\s+MODE\s+RISK$/,
    );
    expect(rowOf(listed.stdout, laser)).toEqual([
      laser,
      'env:MHS_ENDPOINTS',
      'http',
      'false',
      'self',
      'CL3',
      '?',
      '?',
      '?',
    ]);
    expect(rowOf(listed.stdout, stdio)).toEqual([stdio, `file:${file}`, 'stdio', 'false', '?', '?', '?', '?', '?']);
    expect(listed.stderr).toContain('warning MHS.HOST.CONFIG_INVALID [env:MHS_ENDPOINTS]');
    expect(listed.stdout).toContain('experimental');

    const enabled = await cli('enable', laser, '--db', db, '--operator', 'alice');
    expect(enabled.code).toBe(0);
    expect(enabled.stdout).toMatch(new RegExp(`^enabled ${laser} by operator alice \\(ledger seq \\d+\\)`));
    // HOST-094: nothing to allow while the devices are unknown (no manifest admitted yet); it says how to go on.
    expect(enabled.stdout).toContain('e-stop: devices not known yet');

    // An explicit operator inspection connects (the row is enabled) and stores the admitted manifest.
    const shown = await cli('show', laser, '--db', db, '--inspect');
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`endpoint:   ${sim.endpointId}`);
    expect(shown.stdout).toContain('Device laser');
    expect(shown.stdout).toContain('mode: HARDWARE; risk class: R3');
    expect(shown.stdout).toContain('MHS.SAFETY.NOT_CERTIFIED');

    const relisted = await cli('list', '--db', db, '--endpoints-file', file);
    expect(rowOf(relisted.stdout, laser)).toEqual([
      laser,
      'env:MHS_ENDPOINTS',
      'http',
      'true',
      'self',
      'CL3',
      'laser',
      'hardware',
      'max R3',
    ]);
    expect(rowOf(relisted.stdout, stdio)?.[3]).toBe('false');

    const disabled = await cli('disable', laser, '--db', db, '--operator', 'bob');
    expect(disabled.stdout).toMatch(new RegExp(`^disabled ${laser} by operator bob`));

    // Enabled again with its devices known: the same action allows the laser's e-stop (kind "both"; HOST-094, 046).
    const again = await cli('enable', laser, '--db', db, '--operator', 'carol');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('e-stop allowed (HOST-094): laser');
    const twice = await cli('enable', laser, '--db', db, '--operator', 'carol');
    expect(twice.stdout).toContain('e-stop: nothing newly allowed');

    const store = await openDb(db);
    try {
      const ledger = await openLedger(store, { clock: new RealClock() });
      const entries = await ledger.range(0, (await ledger.head()).seq);
      const ops = entries.filter(
        (e) => (e.kind === 'operator.enable' || e.kind === 'operator.disable') && e.scope !== 'estop',
      );
      expect(ops.map((e) => [e.kind, e.connector_id, (e.operator as { id: string; via: string }).id])).toEqual([
        ['operator.enable', laser, 'alice'],
        ['operator.disable', laser, 'bob'],
        ['operator.enable', laser, 'carol'],
        ['operator.enable', laser, 'carol'],
      ]);
      const allowances = entries.filter((e) => e.scope === 'estop');
      expect(allowances.map((e) => [e.kind, e.device_id, (e.operator as { id: string }).id])).toEqual([
        ['operator.enable', 'laser', 'carol'],
      ]);
      expect((await ledger.verify()).ok).toBe(true);
    } finally {
      await store.close();
    }
  });
});
