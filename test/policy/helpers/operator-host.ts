// A real host slice for operator tests: a simulator over HTTP with --operator-tools, a SQLite store,
// the ledger, connector rows + enablement, the operator link, the policy services, the engine (its
// agent connection guarded by permit claims) and a Fastify server with the operator API and console.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { RealClock } from '../../../src/core/index.js';
import { createEngine } from '../../../src/engine/index.js';
import type { Engine } from '../../../src/engine/index.js';
import { openLedger } from '../../../src/ledger/index.js';
import type { DurableLedger, LedgerOptions } from '../../../src/ledger/index.js';
import type { Db } from '../../../src/ledger/db.js';
import type { OpenDbOptions } from '../../../src/ledger/open-db.js';
import { connect } from '../../../src/mhs/index.js';
import type { ConnectorRow, Manifest, MhsConnection } from '../../../src/mhs/index.js';
import { openConnectorStore } from '../../../src/policy/connector-store.js';
import type { ConnectorStore } from '../../../src/policy/connector-store.js';
import { createEnablement } from '../../../src/policy/enablement.js';
import type { Enablement } from '../../../src/policy/enablement.js';
import {
  DEFAULT_POLICY,
  createConnectorDirectory,
  createOperatorLink,
  createOperatorEvents,
  createOperatorServices,
  deploymentOf,
  announceLedgerStatus,
  observeLedger,
  guardPermits,
} from '../../../src/policy/index.js';
import type { OperatorServices, PolicyConfig } from '../../../src/policy/index.js';
import { registerConsole } from '../../../src/console/index.js';
import { registerOperatorRoutes } from '../../../src/server/operator-routes.js';
import { startSimHttp } from '../../helpers/sim.js';
import type { SimHttp } from '../../helpers/sim.js';
import { openTestDb } from './test-db.js';

/** A parsed JSON body (tests index into it freely). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ApiBody = any;

export const CONNECTOR_ID = 'mhs-test-sim';

export interface OperatorHost {
  sim: SimHttp;
  db: Db;
  ledger: DurableLedger;
  store: ConnectorStore;
  enablement: Enablement;
  services: OperatorServices;
  engine: Engine;
  app: FastifyInstance;
  /** `http://127.0.0.1:<port>` */
  url: string;
  endpointId: string;
  tokens: { op1: string; op2: string; client: string };
  /** Connects the agent connection and attaches it to the engine (after enablement). */
  attach(): Promise<MhsConnection>;
  /** The operator API with a token. */
  api(token: string | null, method: string, path: string, body?: unknown): Promise<{ status: number; body: ApiBody }>;
  close(): Promise<void>;
}

export interface OperatorHostOptions {
  families: string;
  simFlags?: string[];
  /** Projection policy document for the sim (`--config`). */
  projection?: Record<string, unknown>;
  policy?: Partial<PolicyConfig> | (() => PolicyConfig | null);
  /** Devices on the policy file's e-stop allow-list (default: every device of the simulator). */
  estopDevices?: string[];
  /** A switch the test flips to make the policy engine unavailable (HOST-043). */
  policySwitch?: { available: boolean };
  /** Store options (e.g. a short SQLite busy timeout). */
  db?: OpenDbOptions;
  /** Ledger options (e.g. a short store-probe interval). */
  ledger?: Partial<Omit<LedgerOptions, 'clock'>>;
  /** Enable the connector and attach the engine (default true). */
  enable?: boolean;
  /**
   * Give the operator routes the policy as `serve` does (default false): approvals then carry the policy's wait
   * limit (`approvalTimeoutMs`), and enabling through the API allows the devices' trusted e-stop per HOST-094.
   */
  routesPolicy?: boolean;
}

export async function startOperatorHost(o: OperatorHostOptions): Promise<OperatorHost> {
  const flags = ['--operator-tools', ...(o.simFlags ?? [])];
  if (o.projection) {
    const file = join(mkdtempSync(join(tmpdir(), 'mhs-proj-')), 'policy.json');
    writeFileSync(file, JSON.stringify(o.projection));
    flags.push('--config', file);
  }
  const sim = await startSimHttp(o.families, flags);
  const clock = new RealClock();
  const db = await openTestDb(o.db ?? {});
  const events = createOperatorEvents();
  const opened = await openLedger(db, { clock, ...(o.ledger ?? {}) });
  const ledger = observeLedger(opened, events);
  announceLedgerStatus(opened, events);
  const store = await openConnectorStore(db, { clock });
  const discovered: Omit<ConnectorRow, 'enabled'> = {
    connector_id: CONNECTOR_ID,
    transport: 'http',
    url: sim.mcpUrl,
    base_url: sim.url,
    endpoint_id: sim.endpointId,
    display_name: 'Test simulator',
    source: { kind: 'env', ref: 'MHS_ENDPOINTS' },
    seen_in: [{ kind: 'env', ref: 'MHS_ENDPOINTS' }],
    auth: { scheme: 'none' },
    descriptor: null,
  };
  await store.upsertDiscovered(discovered);
  const enablement = createEnablement({ store, ledger });
  const manifests = new Map<string, Manifest>();
  const isEnabled = (id: string) => enablement.isEnabled(id);
  const link = createOperatorLink({ rows: () => store.list(), connect: (row) => connect(row, { isEnabled }) });
  const directory = createConnectorDirectory({
    rows: () => store.list(),
    manifestFor: (row) => manifests.get(row.connector_id),
  });
  const policy =
    typeof o.policy === 'function'
      ? o.policy
      : {
          ...DEFAULT_POLICY,
          estopAllow: (o.estopDevices ?? ['*']).map((device_id) => ({ endpoint_id: sim.endpointId, device_id })),
          ...o.policy,
        };
  const sw = o.policySwitch;
  const livePolicy = sw ? () => (sw.available ? (typeof policy === 'function' ? policy() : policy) : null) : policy;
  const services = createOperatorServices({
    db,
    ledger,
    clock,
    link,
    enablement,
    directory,
    policy: livePolicy,
    events,
  });
  const engine = createEngine({
    ledger,
    clock,
    gate: services.gate,
    // HOST-090: the deployment section of the same policy, as openHostRuntime carries it.
    deployment: async () => deploymentOf(typeof livePolicy === 'function' ? await livePolicy() : livePolicy),
    isEnabled: (cid) => enablement.isEnabled(cid),
  });
  await engine.start();
  // SSE streams from browser pages must not hold the server open on close.
  const app = Fastify({ forceCloseConnections: true });
  const deps = { ...services, ledger, directory, enablement, clock, ...(o.routesPolicy ? { policy: livePolicy } : {}) };
  await registerOperatorRoutes(app, deps);
  await registerConsole(app, deps);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  const tokens = {
    op1: (await services.tokens.add('op-alice', 'operator')).token,
    op2: (await services.tokens.add('op-bob', 'operator')).token,
    client: (await services.tokens.add('client-carol', 'client')).token,
  };
  let agent: MhsConnection | undefined;
  const host: OperatorHost = {
    sim,
    db,
    ledger,
    store,
    enablement,
    services,
    engine,
    app,
    url,
    endpointId: sim.endpointId,
    tokens,
    async attach() {
      const row = await store.get(CONNECTOR_ID);
      agent = await connect(row!, { isEnabled });
      manifests.set(CONNECTOR_ID, agent.manifest);
      await engine.attach(guardPermits(agent, (id) => services.gate.claimPermit(id)));
      return agent;
    },
    async api(token, method, path, body) {
      const headers: Record<string, string> = {};
      if (token) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
    async close() {
      await engine.stop().catch(() => undefined);
      await agent?.close().catch(() => undefined);
      await app.close();
      await (link as { close(): Promise<void> }).close();
      await sim.stop();
      await db.close();
    },
  };
  // Like the served host: an operator enabling the connector attaches it (then the console refreshes).
  enablement.onChange((c) => {
    if (c.enabled && !agent)
      void host.attach().then(() => services.events.emit('endpoint.enabled', { connector_id: c.connector_id }));
  });
  if (o.enable !== false) {
    await enablement.enable(CONNECTOR_ID, { id: 'test-setup', via: 'test' });
    await host.attach();
  }
  return host;
}
