// Guarantees (issue 16 acceptance, fuzz): ≥ 10,000 generated inputs across the REST surface (in-process Fastify
// `app.inject`), the operator API (same app, real operator services), CLI flag parsing (the real commander
// programs, actions replaced so only parsing runs), task/policy/MCP-servers/agent-script parsers, wire
// descriptors and capability tool arguments (the schema validation path of the governed call) never crash, never
// answer 5xx, and only ever fail with codes registered in ErrorCode; refused run requests create no run. Lone
// UTF-16 surrogates are in every string pool. Real SQLite store; no simulator process (the schema path is in-process).
/* eslint-disable @typescript-eslint/no-explicit-any -- generated inputs and JSON bodies are loose by design */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, HostError, RealClock, assertJcsEncodable, isErrorCode } from '../../src/core/index.js';
import { stripControl } from '../../src/engine/governed-call.js';
import { InputSchemaCache } from '../../src/engine/schema-cache.js';
import { openDb, openLedger } from '../../src/ledger/index.js';
import type { Db, DurableLedger } from '../../src/ledger/index.js';
import { assertWire, checkWire } from '../../src/mhs/validate.js';
import type { WireKind } from '../../src/mhs/wire-schemas.js';
import { createOpenwopHost } from '../../src/openwop/host.js';
import type { OpenwopHost } from '../../src/openwop/host.js';
import { parseMcpServersConfig } from '../../src/openwop/services/mcp-servers-config.js';
import { openConnectorStore } from '../../src/policy/connector-store.js';
import { createEnablement } from '../../src/policy/enablement.js';
import {
  DEFAULT_POLICY,
  createConnectorDirectory,
  createOperatorEvents,
  createOperatorLink,
  createOperatorServices,
} from '../../src/policy/index.js';
import { parsePolicyConfig } from '../../src/policy/policy-config.js';
import { parseAgentScript } from '../../src/ai/agent-script.js';
import { readTaskFile } from '../../src/cli/run-task-command.js';
import { ledgerCommand } from '../../src/cli/ledger-command.js';
import { tokenCommand } from '../../src/cli/token-command.js';
import { runTaskCommand } from '../../src/cli/run-task-command.js';
import { approvalsCommand } from '../../src/cli/approvals-command.js';
import { simCommand } from '../../src/cli/sim-command.js';
import { invokeCommand } from '../../src/cli/invoke-command.js';
import { SimEndpoint } from '../../src/sim/endpoint.js';
import { loadFamily } from '../../src/sim/family.js';
import { buildApp } from '../../src/server/app.js';

const clock = new RealClock();
const dir = mkdtempSync(join(tmpdir(), 'mhs-fuzz-'));

// Strings a hostile caller sends: ordinary text, JSON-ish, path tricks, and lone surrogates anywhere.
const nasty = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    '',
    '\ud800',
    'a\udc00b',
    '\ud83d\ude00',
    '__proto__',
    'constructor',
    '../..',
    '%',
    '%E0%A4%A',
    'null',
  ),
  fc.string({ unit: 'binary', maxLength: 6 }),
);
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    nasty,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(nasty, tie('v'), { maxKeys: 4 }),
  ),
})).v;

/** Percent-encodes; a lone surrogate becomes the invalid UTF-8 bytes a hostile client would send instead. */
function enc(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return '%ED%A0%80';
  }
}

/** A failure is fine when it carries a registered code; anything else is a crash. */
function registered(err: unknown): boolean {
  return err instanceof HostError && isErrorCode(err.code);
}

function checkEnvelope(status: number, body: any, ctx: unknown): void {
  // 501 capability_not_provided is the documented answer of an unadvertised capability, not a fault.
  const declared = status === 501 && body?.error === ErrorCode.CAPABILITY_NOT_PROVIDED;
  if (status >= 500 && !declared) throw new Error(`5xx ${status} ${JSON.stringify(body)} for ${JSON.stringify(ctx)}`);
  if (status >= 400) {
    if (!body || !isErrorCode(body.error) || typeof body.message !== 'string')
      throw new Error(`not an envelope with a registered code: ${JSON.stringify(body)} for ${JSON.stringify(ctx)}`);
  }
}

let db: Db;
let ledger: DurableLedger;
let host: OpenwopHost;
let app: Awaited<ReturnType<typeof buildApp>>['app'];
let client = '';
let operator = '';

beforeAll(async () => {
  db = await openDb(join(dir, 'host.db'));
  ledger = await openLedger(db, { clock, probeIntervalMs: 0 });
  host = await createOpenwopHost({ db, clock, workflowsDir: false });
  const events = createOperatorEvents();
  const store = await openConnectorStore(db, { clock });
  const enablement = createEnablement({ store, ledger });
  const link = createOperatorLink({
    rows: () => store.list(),
    connect: () => Promise.reject(new HostError(ErrorCode.TRANSPORT_DISCONNECTED, 'no endpoints in the fuzz host')),
  });
  const directory = createConnectorDirectory({ rows: () => store.list(), manifestFor: () => undefined });
  const services = createOperatorServices({
    db,
    ledger,
    clock,
    link,
    enablement,
    directory,
    policy: DEFAULT_POLICY,
    events,
  });
  client = (await services.tokens.add('fuzz-client', 'client')).token;
  operator = (await services.tokens.add('fuzz-operator', 'operator')).token;
  ({ app } = await buildApp({
    host,
    auth: services.tokens,
    clock,
    operator: { ...services, ledger, directory, enablement, clock },
  }));
});
afterAll(async () => {
  await app?.close();
  await host?.close();
  ledger?.dispose();
  await db?.close();
});

const headersArb = fc.record(
  {
    authorization: fc.oneof(
      fc.constant('CLIENT'),
      fc.constant('OPERATOR'),
      fc.constant('Bearer nope'),
      fc.string({ maxLength: 8 }),
    ),
    'content-type': fc.constantFrom('application/json', 'text/plain', 'application/xml', 'multipart/form-data', ''),
  },
  { requiredKeys: [] },
);
const bodyArb = fc.oneof(
  json.map((v) => JSON.stringify(v) ?? 'null'),
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    '{"workflowId":"conformance-noop"}',
    '{"workflowId":"conformance-noop","inputs":{"a":"\\ud800"}}',
    '{',
  ),
);

async function inject(method: string, url: string, headers: Record<string, string>, body: string | undefined) {
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (k === 'authorization') h[k] = v === 'CLIENT' ? `Bearer ${client}` : v === 'OPERATOR' ? `Bearer ${operator}` : v;
    else if (v) h[k] = v;
  }
  const res = await app.inject({
    method: method as any,
    url,
    headers: h,
    ...(body !== undefined ? { payload: body } : {}),
  });
  let parsed: unknown = null;
  try {
    parsed = res.body ? JSON.parse(res.body) : null;
  } catch {
    parsed = res.body;
  }
  return { status: res.statusCode, body: parsed };
}

describe('fuzz: HTTP surfaces', () => {
  it('REST /v1: no 5xx, every error an envelope with a registered code, refused runs create nothing', async () => {
    const paths = fc.oneof(
      fc.constantFrom('/v1/runs', '/v1/runs/run_x', '/v1/runs/run_x/events', '/v1/workflows', '/v1/openapi.json'),
      fc.constantFrom('/.well-known/openwop', '/v1/runs?limit=0', '/v1/runs?status=%ZZ', '/v1/nope', '/v1/prompts'),
      nasty.map((s) => `/v1/${enc(s)}`),
      nasty.map((s) => `/v1/runs?limit=${enc(s)}&cursor=${enc(s)}`),
    );
    let created = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH'),
        paths,
        headersArb,
        fc.option(bodyArb, { nil: undefined }),
        async (method, url, headers, body) => {
          const withBody = method === 'GET' || method === 'DELETE' ? undefined : body;
          const r = await inject(method, url, headers, withBody);
          checkEnvelope(r.status, r.body, { method, url, headers, body });
          if (method === 'POST' && url.split('?')[0] === '/v1/runs' && r.status === 201) created++;
        },
      ),
      { numRuns: 2500 },
    );
    // Nothing half-applied: exactly the accepted run requests created runs.
    expect((await host.store.listRuns({ limit: 10_000 })).length).toBe(created);
  }, 120_000);

  it('operator API: no 5xx, every error an envelope with a registered code', async () => {
    const paths = fc.oneof(
      fc.constantFrom(
        '/v1/operator/whoami',
        '/v1/operator/approvals',
        '/v1/operator/approvals/apr_x',
        '/v1/operator/approvals/apr_x/approve',
        '/v1/operator/approvals/apr_x/deny',
        '/v1/operator/permits',
        '/v1/operator/permits/prm_x/revoke',
        '/v1/operator/estop',
        '/v1/operator/estop/allow',
        '/v1/operator/reset',
        '/v1/operator/endpoints',
        '/v1/operator/endpoints/enable',
        '/v1/operator/endpoints/disable',
        '/v1/operator/ledger',
        '/v1/operator/gates',
        '/v1/operator/nope',
      ),
      nasty.map((s) => `/v1/operator/approvals?status=${enc(s)}&limit=${enc(s)}`),
      nasty.map((s) => `/v1/operator/ledger?from=${enc(s)}&kind=${enc(s)}`),
    );
    const body = fc.oneof(
      bodyArb,
      fc.record({ reason: nasty }).map((v) => JSON.stringify(v)),
      fc.record({ endpoint_id: nasty, device_id: nasty, allowed: fc.boolean() }).map((v) => JSON.stringify(v)),
      fc.record({ connector_id: nasty }).map((v) => JSON.stringify(v)),
    );
    const head = (await ledger.head()).seq;
    let mutations = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST'),
        paths,
        headersArb,
        fc.option(body, { nil: undefined }),
        async (m, url, h, b) => {
          const r = await inject(m, url, h, m === 'GET' ? undefined : b);
          checkEnvelope(r.status, r.body, { m, url, h, b });
          if (m === 'POST' && r.status < 300) mutations++;
        },
      ),
      { numRuns: 2000 },
    );
    // Nothing half-applied: only accepted mutations (e.g. ledger/verify) wrote entries, apart from the record of a
    // refused safety action (issue 20 item 5: an e-stop or reset refused before sending is evidence, nothing sent).
    expect(ledger.status().state).toBe('available');
    if (mutations === 0) {
      const written = (await ledger.range(head + 1)).filter((e) => e.seq > head);
      expect(written.filter((e) => !(e.kind.endsWith('.request') && e.sent === false && e.refused))).toEqual([]);
    }
  }, 120_000);
});

describe('fuzz: CLI flags, files, descriptors, tool arguments', () => {
  const factories: Record<string, () => Command> = {
    ledger: ledgerCommand,
    token: tokenCommand,
    'run-task': runTaskCommand,
    approvals: approvalsCommand,
    sim: simCommand,
    invoke: invokeCommand,
  };
  function noActions(c: Command): void {
    c.exitOverride();
    c.configureOutput({ writeOut: () => undefined, writeErr: () => undefined, outputError: () => undefined });
    c.action(() => undefined);
    for (const s of c.commands) noActions(s);
  }

  it('CLI flag parsing (the real commander programs): CommanderError or a registered code, never a crash', async () => {
    const token = fc.oneof(
      fc.constantFrom('show', 'export', 'verify', 'add', 'list', 'revoke', 'approve', 'deny', 'status', 'prune'),
      fc.constantFrom(
        '--db',
        '--from',
        '--to',
        '--out',
        '--json',
        '--kind',
        '--seq',
        '--seed',
        '--http',
        '--drop-reply',
      ),
      fc.constantFrom(
        '--latency-ms',
        '--interlock',
        '--surrogate-reply',
        '--time-scale',
        '--close-after',
        '-h',
        '--help',
      ),
      fc.constantFrom('0', '-1', '1e309', 'NaN', 'x', 'conveyor', 'a:b=open', 'laser:door=closed'),
      nasty,
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(factories)),
        fc.array(token, { maxLength: 6 }),
        async (name, argv) => {
          const program = new Command('mhs-host');
          program.addCommand(factories[name]!());
          noActions(program);
          try {
            await program.parseAsync([name, ...argv], { from: 'user' });
          } catch (err) {
            if (!(err instanceof CommanderError) && !registered(err)) throw err;
          }
        },
      ),
      { numRuns: 2000 },
    );
  }, 120_000);

  it('policy, MCP-servers and agent-script parsers: a value or a registered code', () => {
    const parsers: Array<(v: unknown) => unknown> = [
      parsePolicyConfig,
      (v) => parseMcpServersConfig(v, 'fuzz', {}),
      (v) => parseAgentScript(v, 'fuzz'),
    ];
    const shaped = fc.oneof(
      json,
      fc.record({ rules: json, deployment: json, estopAllow: json }, { requiredKeys: [] }),
      fc.record({ mcpServers: fc.dictionary(nasty, json, { maxKeys: 2 }) }),
      fc.record({ steps: fc.array(json, { maxLength: 3 }), turns: json }, { requiredKeys: [] }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: parsers.length - 1 }), shaped, (i, v) => {
        try {
          parsers[i]!(v);
        } catch (err) {
          if (!registered(err)) throw err;
        }
      }),
      { numRuns: 1800 },
    );
  });

  it('task files (real files on disk): a task or MHS.HOST.CONFIG_INVALID', () => {
    const file = join(dir, 'task.json');
    const text = fc.oneof(
      json.map((v) => JSON.stringify(v) ?? 'null'),
      fc
        .record({
          steps: fc.array(
            fc.record({ endpoint: nasty, device: json, capability: nasty, input: json }, { requiredKeys: [] }),
            { maxLength: 3 },
          ),
        })
        .map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 20 }),
    );
    fc.assert(
      fc.property(text, (t) => {
        writeFileSync(file, t);
        try {
          readTaskFile(file);
        } catch (err) {
          if (!registered(err)) throw err;
          expect((err as HostError).code).toBe(ErrorCode.HOST_CONFIG_INVALID);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('descriptors and wire objects: checkWire never throws, assertWire throws only its registered code', () => {
    const kinds: WireKind[] = ['descriptor', 'manifest', 'receipt', 'session', 'mhs-error'];
    const descriptor = fc.record(
      {
        mhs_version: nasty,
        endpoint_id: nasty,
        transports: fc.array(fc.record({ kind: nasty, url: nasty }), { maxLength: 2 }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.constantFrom(...kinds), fc.oneof(json, descriptor), (kind, v) => {
        const r = checkWire(kind, v);
        expect(typeof r.ok).toBe('boolean');
        try {
          assertWire(kind, v, { code: ErrorCode.HOST_DESCRIPTOR_INVALID, source: 'fuzz' });
        } catch (err) {
          expect(registered(err)).toBe(true);
          expect((err as HostError).code).toBe(ErrorCode.HOST_DESCRIPTOR_INVALID);
        }
      }),
      { numRuns: 1500 },
    );
  });

  it("tool arguments through the governed call's validation path: MHS.SCHEMA.INVALID_INPUT or valid", () => {
    const sim = new SimEndpoint({
      families: ['thermostat', 'conveyor', 'liquid-handler', 'laser'].map(loadFamily),
      endpointId: 'mhs://fuzz',
      clock,
      seed: 1,
      operatorTools: false,
      policy: null,
      faults: {},
      transports: [],
    });
    const bindings = sim.manifest.devices.flatMap((d) => d.capabilities.map((b) => ({ d, b })));
    const schemas = new InputSchemaCache();
    fc.assert(
      fc.property(fc.integer({ min: 0, max: bindings.length - 1 }), json, (i, input) => {
        const { d, b } = bindings[i]!;
        try {
          const stripped = stripControl(input as Record<string, unknown>);
          assertJcsEncodable(stripped, 'capability input', ErrorCode.SCHEMA_INVALID_INPUT);
          schemas.validate(
            { manifestDigest: sim.manifest.manifest_digest, deviceId: d.device_id, capabilityId: b.capability_id },
            b.input_schema,
            stripped,
          );
        } catch (err) {
          expect(registered(err)).toBe(true);
          expect((err as HostError).code).toBe(ErrorCode.SCHEMA_INVALID_INPUT);
        }
      }),
      { numRuns: 1500 },
    );
  });
});
