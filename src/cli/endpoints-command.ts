import { userInfo } from 'node:os';
import { Command, Option } from 'commander';
import { RealClock } from '../core/index.js';
import type { Clock, HostError } from '../core/index.js';
import { readFileSync } from 'node:fs';
import { ErrorCode } from '../core/index.js';
import { openDb, openLedger, resolveDbLocation } from '../ledger/index.js';
import { registryKeyOf } from '../mhs/registry-signature.js';
import type { Db } from '../ledger/index.js';
import { openArtifacts } from '../ledger/artifacts.js';
import type { Artifacts } from '../ledger/artifacts.js';
import { admitManifest } from '../mhs/manifest.js';
import { connect } from '../mhs/connector.js';
import { describeAuth } from '../mhs/connector-row.js';
import type { ConnectorRow } from '../mhs/connector-row.js';
import { discoverEndpoints, sourceTrust } from '../mhs/discovery.js';
import { renderEndpointTable, summarizeEndpoint } from '../mhs/endpoint-summary.js';
import { presentEndpoint, renderEndpointText } from '../mhs/presentation.js';
import type { Manifest } from '../mhs/wire-types.js';
import { openConnectorStore } from '../policy/connector-store.js';
import type { ConnectorStore } from '../policy/connector-store.js';
import { DEFAULT_POLICY, loadPolicyFile } from '../policy/index.js';
import type { PolicyConfig } from '../policy/index.js';
import { openOperatorRuntime } from '../engine/operator-runtime.js';
import type { OperatorRuntime } from '../engine/operator-runtime.js';
import { allowEstopOnEnable } from '../server/estop-on-enable.js';

const EXPERIMENTAL =
  'MHS integration is experimental: connectors stay disabled until an operator enables them (HOST-066, HOST-067).';

interface Ctx {
  db: Db;
  clock: Clock;
  store: ConnectorStore;
  artifacts: Artifacts;
}

async function withCtx<T>(flag: string | undefined, fn: (c: Ctx) => Promise<T>): Promise<T> {
  const db = await openDb(resolveDbLocation({ flag }));
  try {
    const clock = new RealClock();
    const store = await openConnectorStore(db, { clock });
    const artifacts = await openArtifacts(db, { clock });
    return await fn({ db, clock, store, artifacts });
  } finally {
    await db.close();
  }
}

/** The last admitted manifest of a row, re-admitted from the store; undefined when none. */
async function storedManifest(c: Ctx, row: ConnectorRow): Promise<Manifest | undefined> {
  const digest = await c.store.manifestDigest(row.connector_id);
  const raw = digest ? await c.artifacts.getManifest(digest) : undefined;
  if (!raw) return undefined;
  try {
    return admitManifest(raw, { source: row.connector_id });
  } catch {
    return undefined;
  }
}

/** Connects to an enabled row on explicit operator request, admits and stores its manifest. */
async function inspect(c: Ctx, row: ConnectorRow): Promise<Manifest> {
  const conn = await connect(row, {
    descriptor: row.descriptor ?? null,
    isEnabled: async (id) => (await c.store.get(id))?.enabled === true,
  });
  try {
    await c.artifacts.putManifest(conn.manifest as unknown as Record<string, unknown>);
    await c.store.recordManifest(row.connector_id, conn.manifest.endpoint_id, conn.manifest.manifest_digest);
    return conn.manifest;
  } finally {
    await conn.close();
  }
}

const dbOption = () =>
  new Option(
    '--db <location>',
    'store: SQLite file path or postgres:// URL (default: $MHS_HOST_DB or ./.mhs-host/host.db)',
  );
const collect = (v: string, prev: string[]) => [...prev, v];

interface ListFlags {
  db?: string;
  endpointsFile?: string;
  baseUrl: string[];
  federated: string[];
  enableFederated?: boolean;
  registryKey: string[];
  inspect?: boolean;
  json?: boolean;
}

/** Refusals on the discovery path that are evidence (issue 20): a cross-origin redirect, a bad record signature. */
const isRecordedRefusal = (e: HostError): boolean =>
  e.code === ErrorCode.HOST_REGISTRY_SIGNATURE_INVALID || e.details.reason === 'cross_origin_redirect';

async function list(flags: ListFlags): Promise<void> {
  const keys = flags.registryKey.map((p) => registryKeyOf(readFileSync(p, 'utf8'), p));
  await withCtx(flags.db, async (c) => {
    const result = await discoverEndpoints({
      requestedBy: 'operator',
      ...(flags.endpointsFile ? { endpointsFile: flags.endpointsFile } : {}),
      registry: () => c.store.list(),
      baseUrls: flags.baseUrl,
      federated: { enabled: flags.enableFederated === true, registries: flags.federated, keys },
      clock: c.clock,
    });
    // Each refused redirect or record signature is a ledger `error` entry (stage `discovery`), with what was refused.
    const refusals = result.errors.filter(isRecordedRefusal);
    if (refusals.length) {
      const ledger = await openLedger(c.db, { clock: c.clock, probeIntervalMs: 0 });
      await ledger.appendBatch(
        refusals.map((e) => ({
          kind: 'error' as const,
          stage: 'discovery',
          source: e.details.source,
          error: e.toWire(),
        })),
      );
    }
    // Discovery upserts rows; it never enables one (HOST-066).
    for (const e of result.endpoints) {
      const { key: _key, ...row } = e;
      await c.store.upsertDiscovered(row);
    }
    for (const err of result.errors)
      process.stderr.write(`warning ${err.code} [${String(err.details.source ?? '?')}]: ${err.message}\n`);
    for (const r of result.redirects)
      process.stderr.write(`note [${r.source}]: ${r.from} redirected to ${r.to} (same origin)\n`);
    const rows = await c.store.list();
    const summaries = [];
    for (const row of rows) {
      let manifest = await storedManifest(c, row);
      if (flags.inspect && row.enabled) {
        try {
          manifest = await inspect(c, row);
        } catch (err) {
          const e = err as HostError;
          process.stderr.write(`warning ${e.code ?? 'error'} [${row.connector_id}]: ${e.message}\n`);
        }
      }
      summaries.push(summarizeEndpoint(row, manifest));
    }
    if (flags.json) {
      process.stdout.write(
        `${JSON.stringify({ endpoints: summaries, errors: result.errors.map((e) => e.toWire()) }, null, 2)}\n`,
      );
      return;
    }
    process.stdout.write(`${renderEndpointTable(summaries)}\n${EXPERIMENTAL}\n`);
  });
}

async function show(id: string, flags: { db?: string; inspect?: boolean; json?: boolean }): Promise<void> {
  await withCtx(flags.db, async (c) => {
    const row = await c.store.require(id);
    const manifest = flags.inspect ? await inspect(c, row) : await storedManifest(c, row);
    const ctx = { source: `${row.source.kind}:${row.source.ref}`, sourceTrust: sourceTrust(row.source.kind) };
    const presentation = manifest ? presentEndpoint(manifest, ctx) : null;
    if (flags.json) {
      const { auth, ...rest } = row;
      process.stdout.write(
        `${JSON.stringify({ row: { ...rest, auth: describeAuth(auth) }, presentation }, null, 2)}\n`,
      );
      return;
    }
    const lines = [
      `connector:  ${row.connector_id}`,
      `endpoint:   ${row.endpoint_id ?? '? (known after the first admitted connection)'}`,
      `enabled:    ${row.enabled}`,
      `transport:  ${row.transport} ${row.transport === 'stdio' ? JSON.stringify(row.command ?? []) : (row.url ?? '')}`,
      `auth:       ${describeAuth(row.transport === 'stdio' ? { scheme: 'local' } : row.auth)}`,
      `source:     ${ctx.source} (${ctx.sourceTrust})`,
      `seen in:    ${(row.seen_in ?? []).map((s) => `${s.kind}:${s.ref}`).join(', ')}`,
      '',
      presentation
        ? renderEndpointText(presentation)
        : row.enabled
          ? 'No admitted manifest yet: run with --inspect to fetch it.'
          : 'No admitted manifest: the connector is disabled, so nothing is connected (HOST-068).',
      '',
      EXPERIMENTAL,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  });
}

interface EnableFlags {
  db?: string;
  operator?: string;
  policy?: string;
}

async function setEnabled(id: string, enabled: boolean, flags: EnableFlags): Promise<void> {
  const policy = flags.policy ? loadPolicyFile(flags.policy) : DEFAULT_POLICY;
  const db = await openDb(resolveDbLocation({ flag: flags.db }));
  try {
    const rt = await openOperatorRuntime(db, new RealClock(), policy);
    try {
      const operator = { id: flags.operator ?? userInfo().username, via: 'cli' };
      const r = enabled ? await rt.enablement.enable(id, operator) : await rt.enablement.disable(id, operator);
      const rec = r.entry ? `ledger seq ${r.entry.seq}` : 'NOT recorded: the ledger is unavailable';
      const out = [
        `${enabled ? 'enabled' : 'disabled'} ${id} by operator ${operator.id} (${rec}); applies to every MHS surface`,
      ];
      if (enabled) out.push(await allowEstops(rt, id, operator.id, policy));
      process.stdout.write(`${out.join('\n')}\n${EXPERIMENTAL}\n`);
    } finally {
      await rt.close();
    }
  } finally {
    await db.close();
  }
}

/** HOST-094 with HOST-046, as the console's enable: the same operator action allows the devices' trusted e-stop. */
async function allowEstops(rt: OperatorRuntime, id: string, operator: string, policy: PolicyConfig): Promise<string> {
  const d = {
    directory: rt.directory,
    estopAllow: rt.services.estopAllow,
    safety: rt.services.safety,
    clock: rt.clock,
  };
  const allowed = await allowEstopOnEnable({ ...d, policy }, id, { id: operator, name: operator });
  if (allowed.length) return `e-stop allowed (HOST-094): ${allowed.join(', ')}`;
  const known = (await rt.directory.list()).find((e) => e.connector_id === id)?.devices.length;
  return known
    ? 'e-stop: nothing newly allowed (already allowed, hardware-only, or the policy names this endpoint)'
    : 'e-stop: devices not known yet; `endpoints show <id> --inspect`, then enable again or use `mhs-host estop-allow`';
}

/** `mhs-host endpoints list | show <id> | enable <id> | disable <id>` (issue 3; docs/discovery.md). */
export function endpointsCommand(): Command {
  const cmd = new Command('endpoints').description('Discover MHS endpoints and manage their connector rows');
  cmd
    .command('list')
    .description('Discover endpoints from every source, store their connector rows (never enabled) and list them')
    .addOption(dbOption())
    .option('--endpoints-file <path>', 'endpoints.json (default: $MHS_ENDPOINTS_FILE or ~/.mhs/endpoints.json)')
    .option('--base-url <url>', 'fetch /.well-known/mhs.json at this base URL (repeatable)', collect, [])
    .option(
      '--federated <url>',
      'federated registry document URL (repeatable; used only with --enable-federated)',
      collect,
      [],
    )
    .option('--enable-federated', 'operator opt-in to federated registries (off by default)')
    .option(
      '--registry-key <pem>',
      'Ed25519 public key (PEM) trusted to sign federated registry records (repeatable); a record signed by none is refused',
      collect,
      [],
    )
    .option('--inspect', 'connect to ENABLED endpoints to fetch and admit their manifests')
    .option('--json', 'print JSON')
    .action((flags: ListFlags) => list(flags));
  cmd
    .command('show')
    .description('Show one connector row and what the model would be shown for it')
    .argument('<id>', 'connector id (mhs-...)')
    .addOption(dbOption())
    .option('--inspect', 'connect (enabled connectors only) to fetch and admit the manifest')
    .option('--json', 'print JSON')
    .action((id: string, flags: { db?: string; inspect?: boolean; json?: boolean }) => show(id, flags));
  for (const [name, on] of [
    ['enable', true],
    ['disable', false],
  ] as const)
    cmd
      .command(name)
      .description(`${on ? 'Enable' : 'Disable'} a connector (an operator action recorded in the ledger)`)
      .argument('<id>', 'connector id (mhs-...)')
      .addOption(dbOption())
      .option('--operator <name>', 'operator identity recorded in the ledger (default: the OS user)')
      .option('--policy <file>', 'approval policy JSON; its estopAllow decides e-stop allowances (HOST-094)')
      .action((id: string, flags: EnableFlags) => setEnabled(id, on, flags));
  return cmd;
}
