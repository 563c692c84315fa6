// Shared fixtures for the ledger tests: store backends (SQLite temp file, PostgreSQL schema per
// run), a sample store holding every artifact kind, and a CLI runner.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GENESIS_PREV_DIGEST, H, SimulatedClock, seal } from '../../src/core/index.js';
import type { Clock } from '../../src/core/index.js';
import { bindingDigest, openArtifacts, openDb, openLedger, receiptEntry } from '../../src/ledger/index.js';
import type { Artifacts, Db, DurableLedger } from '../../src/ledger/index.js';
import { cliEntry } from '../helpers/cli-entry.js';

export const REPO = new URL('../../', import.meta.url).pathname;
export const PG_URL = process.env['MHS_TEST_PG_URL'];

/** A fresh temp folder, removed by the returned function. */
export function tempDir(prefix = 'mhs-ledger-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A store location plus cleanup. */
export interface StoreHandle {
  location: string;
  cleanup: () => Promise<void>;
}

/** How the shared suite gets a fresh, empty store of one dialect. */
export interface Backend {
  name: 'sqlite' | 'postgres';
  fresh(): Promise<StoreHandle>;
}

let counter = 0;

export const sqliteBackend: Backend = {
  name: 'sqlite',
  async fresh() {
    const t = tempDir();
    return { location: join(t.dir, 'host.db'), cleanup: async () => t.cleanup() };
  },
};

/** PostgreSQL: a schema per store (`?schema=`), dropped afterwards, so parallel runs never collide. */
export const postgresBackend: Backend = {
  name: 'postgres',
  async fresh() {
    const schema = `mhs_t_${process.pid}_${Math.random().toString(36).slice(2, 8)}_${++counter}`;
    const base = PG_URL as string;
    const location = `${base}${base.includes('?') ? '&' : '?'}schema=${schema}`;
    return {
      location,
      cleanup: async () => {
        const db = await openDb(base);
        await db.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await db.close();
      },
    };
  },
};

/** The backends this run can use: SQLite always, PostgreSQL when MHS_TEST_PG_URL is set. */
export const BACKENDS: Backend[] = PG_URL ? [sqliteBackend, postgresBackend] : [sqliteBackend];

export const ENDPOINT = 'mhs://localhost:7400';

/** A manifest with a correct digest (wire §3). */
export function sampleManifest(endpointId = ENDPOINT): Record<string, unknown> {
  const m: Record<string, unknown> = {
    mhs_version: '0.9',
    endpoint_id: endpointId,
    manifest_version: 1,
    display_name: 'Conveyor (test)',
    safety_notice: 'MHS.SAFETY.NOT_CERTIFIED',
    redaction: { paths: ['/input/operator_note'] },
    devices: [],
  };
  return { ...m, manifest_digest: H(m) };
}

/**
 * An endpoint evidence chain (wire §9) with `n` receipts, and those receipts as the endpoint returned them.
 * `bodyKeepsReplayed`: chained as a non-conforming endpoint does it (issue 16), the body keeping `replayed`.
 */
export function sampleEndpointChain(n: number, endpointId = ENDPOINT, opts: { bodyKeepsReplayed?: boolean } = {}) {
  const entries: Record<string, unknown>[] = [
    seal({ seq: 0, prev_digest: GENESIS_PREV_DIGEST, ts: '2026-01-01T00:00:00.000Z', kind: 'genesis', body: {} }),
  ];
  const receipts: Record<string, unknown>[] = [];
  for (let i = 1; i <= n; i++) {
    const body = {
      mhs_version: '0.9',
      receipt_id: `rcp_${i}`,
      command_id: `cmd_${i}`,
      session_id: 'ses_1',
      endpoint_id: endpointId,
      device_id: 'conveyor',
      capability_id: 'cap.world.step.v1',
      mode: 'simulated',
      status: 'completed',
      input_digest: H({ ticks: i }),
      output: { position_mm: i * 100 },
      error: null,
    };
    const prev = entries[entries.length - 1] as { digest: string };
    const hashed = opts.bodyKeepsReplayed ? { ...body, replayed: false } : body;
    const e = seal({ seq: i, prev_digest: prev.digest, ts: '2026-01-01T00:00:01.000Z', kind: 'receipt', body: hashed });
    entries.push(e);
    receipts.push({ ...body, replayed: false, evidence: { seq: i, prev_digest: prev.digest, digest: e.digest } });
  }
  const bundle = {
    endpoint_id: endpointId,
    genesis_digest: (entries[0] as { digest: string }).digest,
    head_digest: (entries[entries.length - 1] as { digest: string }).digest,
    entries,
  };
  return { bundle, receipts };
}

/** Fills a store with every artifact kind: manifest, endpoint bundle, session events, receipts, transcript. */
export async function fillSampleStore(
  db: Db,
  clock: Clock,
  ledger: DurableLedger,
  chain: { bodyKeepsReplayed?: boolean } = {},
): Promise<void> {
  const artifacts = await openArtifacts(db, { clock });
  const manifest = sampleManifest();
  await artifacts.putManifest(manifest);
  const { bundle, receipts } = sampleEndpointChain(3, ENDPOINT, chain);
  await artifacts.putEvidenceBundle(bundle);
  await ledger.append({
    kind: 'session.open',
    session_id: 'ses_1',
    endpoint_id: ENDPOINT,
    manifest_digest: manifest['manifest_digest'],
  });
  for (const r of receipts) {
    await ledger.append({
      kind: 'command.intent',
      command_id: r['command_id'],
      session_id: 'ses_1',
      endpoint_id: ENDPOINT,
    });
    await ledger.append(receiptEntry(r, { received_at: '2026-01-01T00:00:02.000Z' }));
    await recordToolCall(ledger, artifacts, {
      session: 'ses_1',
      callId: `call_${String(r['command_id'])}`,
      tool: 'mhs__cap__conveyor__step',
      input: { ticks: 1 },
      result: { status: 'completed' },
    });
  }
  await recordEvidenceExport(ledger, bundle);
  await ledger.append({ kind: 'session.close', session_id: 'ses_1', endpoint_id: ENDPOINT });
}

/**
 * What the host's tool dispatch records for one model tool call (src/engine/tool-dispatch.ts): the call item,
 * the `tool_call` entry binding both transcript items by digest (issue 20), then the result item.
 */
export async function recordToolCall(
  ledger: DurableLedger,
  artifacts: Pick<Artifacts, 'appendTranscript'>,
  c: { session: string; callId: string; tool: string; input: Record<string, unknown>; result: Record<string, unknown> },
): Promise<number> {
  const call = {
    kind: 'tool_call',
    session_id: c.session,
    call_id: c.callId,
    tool: c.tool,
    input: c.input,
    input_digest: H(c.input),
  };
  const result = {
    kind: 'tool_result',
    session_id: c.session,
    call_id: c.callId,
    tool: c.tool,
    is_error: false,
    command_id: null,
    result: c.result,
  };
  await artifacts.appendTranscript(call);
  const entry = await ledger.append({
    kind: 'tool_call',
    agent_run_id: c.session,
    call_id: c.callId,
    tool: c.tool,
    input_digest: H(c.input),
    result_digest: H(c.result),
    transcript_digests: { call: bindingDigest(call), result: bindingDigest(result) },
  });
  await artifacts.appendTranscript({ ...result, ledger_seq: entry.seq });
  return entry.seq;
}

/** What the host records when it collects an endpoint's evidence bundle (src/engine/endpoint-evidence.ts). */
export async function recordEvidenceExport(
  ledger: DurableLedger,
  bundle: { endpoint_id: string; genesis_digest: string; head_digest: string; entries: unknown[] },
): Promise<void> {
  await ledger.append({
    kind: 'evidence.export',
    source: 'endpoint',
    endpoint_id: bundle.endpoint_id,
    genesis_digest: bundle.genesis_digest,
    head_digest: bundle.head_digest,
    entries: bundle.entries.length,
    stored: true,
  });
}

/** Opens a store + ledger on a simulated clock. */
export async function openStore<C extends Clock = SimulatedClock>(location: string, clock?: C) {
  const c = clock ?? (new SimulatedClock() as unknown as C);
  const db = await openDb(location);
  const ledger = await openLedger(db, { clock: c });
  return { db, ledger, clock: c };
}

/** Runs `mhs-host <args>` in a fresh process; resolves with its exit code and output. */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...cliEntry().args, ...args], {
      cwd: REPO,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
