// Guarantees: `mhs-host demo` (what `npm start` runs) works on a fresh store: it says, before enabling, that it
// enables the demo connectors as the OS user who ran it, records that user (via `cli demo`) in the
// operator.enable ledger entries (HOST-066, 069), runs a multi-endpoint task on the bundled simulators, prints
// receipts and a verified ledger, and exits 0; `mhs-host invoke` and `mhs-host run-task` then drive the same
// enabled connectors and print full receipts, decided by the same policy gate as `serve` (`--policy FILE`: a
// policy rule approves and is recorded `policy_rule`; a step that needs a human times out with a stable code).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { cli, ledgerEntries } from '../helpers/mhs-host.js';

const dir = mkdtempSync(join(tmpdir(), 'mhs-cli-'));
const db = join(dir, 'host.db');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('mhs-host demo, invoke, run-task', () => {
  test('HOST-066 HOST-069 HOST-080: demo enables as the OS user, runs the task, verifies the ledger, exits 0', async () => {
    const me = userInfo().username;
    const demo = await cli(['demo', '--db', db]);
    expect(demo.stderr).toBe('');
    expect(demo.code).toBe(0);
    const lines = demo.stdout.split('\n');
    const said = lines.findIndex((l) => l.startsWith(`enabling the demo connectors as operator "${me}": the OS user`));
    const firstEnabled = lines.findIndex((l) => / enabled by operator /.test(l));
    expect(said).toBeGreaterThanOrEqual(0);
    expect(firstEnabled).toBeGreaterThan(said);
    expect(demo.stdout).toContain(`enabled by operator "${me}"`);
    expect(demo.stdout).not.toContain('demo-operator');
    const enables = (await ledgerEntries(db)).filter((e) => e.kind === 'operator.enable');
    expect(enables.map((e) => [e.connector_id, e.operator]).sort()).toEqual([
      ['mhs-demo-conveyor', { id: me, via: 'cli demo' }],
      ['mhs-demo-thermostat', { id: me, via: 'cli demo' }],
    ]);
    expect(demo.stdout).toMatch(/task tsk_\S+: completed/);
    expect(demo.stdout).toContain('ledger: verified');
    expect(demo.stdout.trim().split('\n').at(-1)).toBe('demo: ok');

    const inv = await cli([
      'invoke',
      'mhs-demo-conveyor',
      'conveyor-workcell',
      'cap.world.step.v1',
      '--input',
      '{"ticks":2}',
      '--db',
      db,
    ]);
    expect(inv.code).toBe(0);
    const receipt = JSON.parse(inv.stdout) as Record<string, unknown>;
    expect(receipt).toMatchObject({ status: 'completed', device_id: 'conveyor-workcell', replayed: false });
    expect(receipt.evidence).toBeTruthy();

    const bad = await cli([
      'invoke',
      'mhs-demo-conveyor',
      'conveyor-workcell',
      'cap.world.step.v1',
      '--input',
      '{"ticks":0}',
      '--db',
      db,
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('MHS.SCHEMA.INVALID_INPUT');

    const file = join(dir, 'task.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'cli task',
        steps: [
          {
            endpoint: 'mhs-demo-conveyor',
            device: 'conveyor-workcell',
            capability: 'cap.world.step.v1',
            input: { ticks: 1 },
          },
          { endpoint: 'mhs-demo-thermostat', device: 'thermostat', capability: 'cap.thermal.read.v1', input: {} },
        ],
      }),
    );
    const run = await cli(['run-task', file, '--db', db]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('[mhs://demo/conveyor] step 0 → completed');
    expect(run.stdout).toContain('[mhs://demo/thermostat] step 1 → completed');
    expect(run.stdout).toMatch(/receipt \{/);
  }, 120_000);

  test('HOST-032 HOST-044: --policy FILE decides CLI calls: a policy rule approves (recorded policy_rule), a human-only step times out', async () => {
    const policy = join(dir, 'policy.json');
    writeFileSync(
      policy,
      JSON.stringify({
        requireApprovalFrom: 'R0',
        rules: [{ id: 'thermo-reads', capability_id: 'cap.thermal.read.v1' }],
      }),
    );
    const read = await cli([
      'invoke',
      'mhs-demo-thermostat',
      'thermostat',
      'cap.thermal.read.v1',
      '--policy',
      policy,
      '--db',
      db,
    ]);
    expect(read.code).toBe(0);
    const receipt = JSON.parse(read.stdout) as { command_id: string };
    const entries = await ledgerEntries(db);
    const intent = entries.find((e) => e.kind === 'command.intent' && e.command_id === receipt.command_id)!;
    expect(entries.find((e) => e.kind === 'approval' && e.approval_id === intent.approval_id)).toMatchObject({
      event: 'decided',
      method: 'policy_rule',
      principals: [{ kind: 'system', id: 'policy:thermo-reads' }],
    });
    // The conveyor step needs a human under this policy; nobody decides within the timeout.
    const step = await cli([
      'invoke',
      'mhs-demo-conveyor',
      'conveyor-workcell',
      'cap.world.step.v1',
      '--input',
      '{"ticks":1}',
      '--policy',
      policy,
      '--approval-timeout',
      '1000',
      '--db',
      db,
    ]);
    expect(step.code).toBe(1);
    expect(step.stderr).toMatch(/approval needed apr_/);
    expect(step.stderr).toContain('error MHS.HOST.APPROVAL_TIMEOUT');
  }, 120_000);
});
