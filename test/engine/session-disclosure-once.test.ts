// Guarantees (HOST-003, HOST-050): the engine's session scope decides disclosure in one place. Two calls racing to
// be a session's first write one `disclosure.shown` entry and both wait for it to be shown; a render that fails
// refuses that call and leaves the session undisclosed, so the next call discloses it; another principal, device or
// manifest digest is another session; a session forgotten past the capacity is disclosed again (never less).
// Against a real SQLite ledger.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RealClock } from '../../src/core/index.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import type { Db, DurableLedger } from '../../src/ledger/index.js';
import { SessionDisclosures } from '../../src/engine/session-disclosure.js';
import type { DisclosedEndpoint, SessionDisclosure } from '../../src/engine/session-disclosure.js';
import type { Manifest } from '../../src/mhs/wire-types.js';

const dir = mkdtempSync(join(tmpdir(), 'mhs-disclose-once-'));
const open: Array<{ db: Db; ledger: DurableLedger }> = [];
afterAll(async () => {
  for (const o of open) {
    o.ledger.dispose();
    await o.db.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
async function store() {
  const db = await openDb(join(dir, `h${n++}.db`));
  const ledger = await openLedger(db, { clock: new RealClock() });
  open.push({ db, ledger });
  return ledger;
}

const device = (id: string) => ({
  device_id: id,
  instance_id: `${id}-1`,
  display_name: id,
  mode: 'simulated',
  risk_class: 'R1',
  determinism: { kind: 'seeded' },
  fidelity: { gaps: [`${id} has no thermal model`] },
});
const ep = (digest = 'd1'): DisclosedEndpoint => ({
  endpointId: 'mhs://lab/a',
  connectorId: 'lab-a',
  manifest: { manifest_digest: digest, devices: [device('dev1'), device('dev2')] } as unknown as Manifest,
});
const host = { kind: 'agent' as const, id: 'host:test' };

async function shownCount(ledger: DurableLedger): Promise<number> {
  return (await ledger.range(0)).filter((e) => e.kind === 'disclosure.shown').length;
}

describe('SessionDisclosures', () => {
  it('HOST-003: two racing first calls write one entry and both wait until it is shown', async () => {
    const ledger = await store();
    const d = new SessionDisclosures(ledger, host);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const shown: SessionDisclosure[] = [];
    const req = {
      surface: 'cli.test',
      show: async (x: SessionDisclosure) => {
        await gate;
        shown.push(x);
      },
    };
    let secondDone = false;
    const first = d.before(ep(), 'dev1', { scope: 's1', request: req });
    const second = d.before(ep(), 'dev1', { scope: 's1', request: req }).then((r) => {
      secondDone = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(secondDone).toBe(false); // waits for the first call's disclosure to be shown
    release();
    const [a, b] = await Promise.all([first, second]);
    expect(a).toMatchObject({ device_id: 'dev1', fidelity_gaps: ['dev1 has no thermal model'], principal: host });
    expect(b).toBeUndefined();
    expect(shown).toHaveLength(1);
    expect(await shownCount(ledger)).toBe(1);
  });

  it('HOST-003: a failed render refuses the call; the next call of the session discloses it', async () => {
    const ledger = await store();
    const d = new SessionDisclosures(ledger, host);
    const broken = {
      surface: 'cli.test',
      show: () => {
        throw new Error('terminal gone');
      },
    };
    await expect(d.before(ep(), 'dev1', { scope: 's1', request: broken })).rejects.toThrow('terminal gone');
    const again = await d.before(ep(), 'dev1', { scope: 's1', request: { surface: 'cli.test' } });
    expect(again?.device_id).toBe('dev1');
  });

  it('HOST-003 HOST-050: another device, principal or manifest digest is another session; past capacity, again', async () => {
    const ledger = await store();
    const d = new SessionDisclosures(ledger, host, 3);
    const at = { scope: 's1' };
    expect(await d.before(ep(), 'dev1', at)).toBeDefined();
    expect(await d.before(ep(), 'dev1', at)).toBeUndefined();
    expect(await d.before(ep(), 'dev2', at)).toBeDefined();
    expect(await d.before(ep(), 'dev1', { ...at, principal: { kind: 'human', id: 'alice' } })).toBeDefined();
    expect(await d.before(ep('d2'), 'dev1', at)).toBeDefined(); // a changed manifest (mode, gaps) is shown again
    expect(await d.before(ep(), 'unknown-device', at)).toBeUndefined();
    expect(await shownCount(ledger)).toBe(4);
    // Capacity 3: the first session was forgotten, so it is disclosed again rather than silently skipped.
    expect(await d.before(ep(), 'dev1', at)).toBeDefined();
    const last = (await ledger.range(0)).filter((e) => e.kind === 'disclosure.shown').at(-1)!;
    expect(last).toMatchObject({ surface: 'api', scope: 's1', device_id: 'dev1', principal: host });
  });
});
