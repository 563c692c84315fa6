// Guarantees, on a real SQLite file and (when MHS_TEST_PG_URL is set) a real PostgreSQL schema:
// connector rows are stored durably and discovery never enables one, not on insert, not on a later
// re-discovery, not on reopening the store (HOST-061, HOST-066); enable/disable are operator actions
// recorded in the ledger with the operator's identity, announced to every surface together, and
// the connector refuses to open while disabled (HOST-067..069); an enable the ledger cannot record
// changes nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, HostError, RealClock } from '../../src/core/index.js';
import { openLedger } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/db.js';
import type { Ledger } from '../../src/ledger/ledger-types.js';
import { connect } from '../../src/mhs/connector.js';
import type { DiscoveredRow } from '../../src/policy/connector-store.js';
import { openConnectorStore } from '../../src/policy/connector-store.js';
import { closeWhenDisabled, createEnablement } from '../../src/policy/enablement.js';
import type { EnablementChange } from '../../src/policy/enablement.js';
import { fakeEndpoint } from './helpers/fake-endpoint.js';
import { STORE_KINDS, openStore } from './helpers/stores.js';

const discovered = (over: Partial<DiscoveredRow> = {}): DiscoveredRow => ({
  connector_id: 'mhs-fake-1',
  transport: 'http',
  url: 'http://fake.invalid/mcp',
  base_url: 'http://fake.invalid',
  endpoint_id: 'mhs://fake:1',
  display_name: 'Fake',
  source: { kind: 'env', ref: 'MHS_ENDPOINTS' },
  seen_in: [{ kind: 'env', ref: 'MHS_ENDPOINTS' }],
  auth: { scheme: 'none' },
  descriptor: null,
  ...over,
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof HostError) return e.code;
    throw e;
  }
  throw new Error('expected a rejection');
}

describe.each(STORE_KINDS)('connector rows and enablement (%s)', (kind) => {
  const opened: Db[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((d) => d.close()));
  });
  const setup = async () => {
    const db = await openStore(kind);
    opened.push(db);
    const clock = new RealClock();
    const store = await openConnectorStore(db, { clock });
    const ledger = await openLedger(db, { clock });
    return { db, clock, store, ledger, enablement: createEnablement({ store, ledger }) };
  };

  it('HOST-066: discovery stores rows disabled and re-discovery never enables or re-disables', async () => {
    const { store, enablement } = await setup();
    const first = await store.upsertDiscovered(discovered());
    expect(first.created).toBe(true);
    expect(first.row).toMatchObject({ connector_id: 'mhs-fake-1', enabled: false, transport: 'http' });
    expect((await store.upsertDiscovered(discovered({ source: { kind: 'file', ref: '/x.json' } }))).row.enabled).toBe(
      false,
    );
    await enablement.enable('mhs-fake-1', { id: 'alice', via: 'test' });
    const again = await store.upsertDiscovered(discovered({ display_name: 'Renamed' }));
    expect(again).toMatchObject({ created: false, row: { enabled: true, display_name: 'Renamed' } });
    // A new endpoint discovered after an enable is still disabled.
    expect((await store.upsertDiscovered(discovered({ connector_id: 'mhs-fake-2' }))).row.enabled).toBe(false);
  });

  it('HOST-069: enable and disable are recorded with the operator identity and reach every surface', async () => {
    const { store, ledger, enablement } = await setup();
    await store.upsertDiscovered(discovered());
    const seen: EnablementChange[] = [];
    enablement.onChange((c) => seen.push(c));
    enablement.onChange(() => {
      throw new Error('a broken surface');
    });
    const on = await enablement.enable('mhs-fake-1', { id: 'alice', via: 'cli' });
    expect(on.row.enabled).toBe(true);
    expect(on.entry).toMatchObject({
      kind: 'operator.enable',
      connector_id: 'mhs-fake-1',
      endpoint_id: 'mhs://fake:1',
      operator: { id: 'alice', via: 'cli' },
    });
    expect(on.entry?.surfaces).toEqual(expect.arrayContaining(['mcp-connector', 'engine', 'model-tools', 'console']));
    const off = await enablement.disable('mhs-fake-1', { id: 'bob' });
    expect(off.entry).toMatchObject({ kind: 'operator.disable', operator: { id: 'bob' } });
    expect(seen.map((c) => [c.enabled, c.operator.id])).toEqual([
      [true, 'alice'],
      [false, 'bob'],
    ]);
    const head = await ledger.head();
    const entries = await ledger.range(0, head.seq);
    expect(entries.filter((e) => e.kind.startsWith('operator.')).map((e) => e.kind)).toEqual([
      'operator.enable',
      'operator.disable',
    ]);
    expect((await ledger.verify()).ok).toBe(true);
    expect(await enablement.status()).toEqual({
      experimental: true,
      connectors: [{ connector_id: 'mhs-fake-1', enabled: false }],
    });
  });

  it('HOST-068: while disabled the connector opens nothing; after enabling it connects; disabling closes it and refuses the next connect', async () => {
    const { store, enablement } = await setup();
    await store.upsertDiscovered(discovered());
    const ep = fakeEndpoint();
    const isEnabled = (id: string) => enablement.isEnabled(id);
    const row = async () => (await store.get('mhs-fake-1'))!;
    expect(await codeOf(connect(await row(), { fetch: ep.fetch, isEnabled }))).toBe(ErrorCode.HOST_CONNECTOR_DISABLED);
    expect(ep.requests()).toBe(0);
    await enablement.enable('mhs-fake-1', { id: 'alice' });
    const stale = await row();
    const c = await connect(stale, { fetch: ep.fetch, isEnabled });
    expect((await c.callTool('mhs__echo', {})).isError).toBe(false);
    // Disabling closes what is open: the open connection's tools are no longer reachable.
    closeWhenDisabled(enablement, 'mhs-fake-1', c);
    await enablement.disable('mhs-fake-1', { id: 'alice' });
    await expect(c.closed).resolves.toMatchObject({ code: ErrorCode.TRANSPORT_DISCONNECTED });
    expect(await codeOf(c.callTool('mhs__echo', {}))).toBe(ErrorCode.TRANSPORT_DISCONNECTED);
    // A surface holding the old (enabled) row is still refused: the live flag is checked.
    const before = ep.requests();
    expect(await codeOf(connect(stale, { fetch: ep.fetch, isEnabled }))).toBe(ErrorCode.HOST_CONNECTOR_DISABLED);
    expect(ep.requests()).toBe(before);
  });

  it('refuses actions without an operator or on unknown connectors, and changes nothing when the ledger is down', async () => {
    const { store, ledger } = await setup();
    await store.upsertDiscovered(discovered());
    const enablement = createEnablement({ store, ledger });
    expect(await codeOf(enablement.enable('mhs-fake-1', { id: ' ' }))).toBe(ErrorCode.HOST_CONFIG_INVALID);
    expect(await codeOf(enablement.enable('mhs-nope', { id: 'alice' }))).toBe(ErrorCode.HOST_ENDPOINT_UNKNOWN);
    const broken: Ledger = {
      ...ledger,
      append: () => Promise.reject(new HostError(ErrorCode.HOST_LEDGER_UNAVAILABLE, 'down')),
    };
    const failing = createEnablement({ store, ledger: broken });
    expect(await codeOf(failing.enable('mhs-fake-1', { id: 'alice' }))).toBe(ErrorCode.HOST_LEDGER_UNAVAILABLE);
    expect((await store.get('mhs-fake-1'))?.enabled).toBe(false);
    // Disabling is never blocked by the ledger (the safe side); it says it was not recorded.
    await createEnablement({ store, ledger }).enable('mhs-fake-1', { id: 'alice' });
    const off = await failing.disable('mhs-fake-1', { id: 'alice' });
    expect(off).toMatchObject({ row: { enabled: false }, entry: null });
  });

  it('HOST-061: keeps ordinary connector rows across reopening the store (durable), with the recorded manifest digest', async () => {
    const { db, store } = await setup();
    await store.upsertDiscovered(
      discovered({
        connector_id: 'mhs-stdio-1',
        transport: 'stdio',
        command: ['node', 'sim.js'],
        url: undefined,
        endpoint_id: null,
      }),
    );
    await store.recordManifest('mhs-stdio-1', 'mhs://stdio/x', 'a'.repeat(64));
    const again = await openConnectorStore(db, { clock: new RealClock() });
    expect(await again.get('mhs-stdio-1')).toMatchObject({
      transport: 'stdio',
      command: ['node', 'sim.js'],
      endpoint_id: 'mhs://stdio/x',
      enabled: false,
    });
    expect(await again.manifestDigest('mhs-stdio-1')).toBe('a'.repeat(64));
  });
});
