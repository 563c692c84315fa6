// Guarantees (issue 21, fast simulator start): the build records its sim startup snapshot for the node binary that
// made it, and a sim started from the snapshot serves what the one-file bundle serves: the same handshake, manifest,
// tool list and capability result (ids and times aside), with its own random ids; a blob made by another node
// version is not used (the bundle starts instead). Every other test's simulator child also runs from the snapshot
// (test/helpers/cli-entry.ts simEntry).
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, test, vi } from 'vitest';
import {
  SIM_BUNDLE,
  SIM_SNAPSHOT_BLOB,
  SIM_SNAPSHOT_META,
  simSnapshotArgs,
  simStartArgs,
} from '../../scripts/sim-snapshot.js';
import { capabilityToolName } from '../../src/mhs/index.js';
import { BUILD_ENV, simEntry } from '../helpers/cli-entry.js';
import { callMhs, connectMcpClient } from '../helpers/sim.js';

vi.setConfig({ testTimeout: 120_000 });

const build = process.env[BUILD_ENV];
const clients: Client[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

/** A sim child started with `node <entry> sim thermostat,conveyor --stdio`, connected with the real MCP client. */
async function sim(entry: string[]): Promise<Client> {
  const c = await connectMcpClient({
    command: process.execPath,
    args: [...entry, 'sim', 'thermostat,conveyor', '--stdio', '--seed', '7'],
  });
  clients.push(c);
  return c;
}

/** What a client sees of a sim: handshake, manifest, tools, one capability call. */
async function transcript(c: Client) {
  const manifest = await c.readResource({ uri: 'mhs://manifest' });
  const tools = await c.listTools();
  const call = await callMhs(c, capabilityToolName('thermostat', 'cap.thermal.read.v1'), {});
  return {
    server: c.getServerVersion(),
    capabilities: c.getServerCapabilities(),
    instructions: c.getInstructions(),
    manifest: manifest.contents,
    tools,
    call,
  };
}

/** `v` with ids, times and the digests that cover them replaced by placeholders (they differ per process). */
function stable(v: unknown): unknown {
  if (typeof v === 'string') {
    if (/^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$/.test(v)) return '<id>';
    if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(v)) return '<time>';
    if (/^(sha256:)?[0-9a-f]{64}$/.test(v)) return '<digest>';
    if (v.startsWith('{')) return stable(JSON.parse(v));
    return v;
  }
  if (Array.isArray(v)) return v.map(stable);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, stable(x)]));
  return v;
}

describe('sim from the startup snapshot', () => {
  test.skipIf(!build)(
    'the test build holds a blob recorded for this node binary, and simEntry starts sim from it',
    () => {
      const meta = JSON.parse(readFileSync(join(build!, SIM_SNAPSHOT_META), 'utf8')) as Record<string, string>;
      expect(meta).toEqual({ node: process.version, arch: process.arch, platform: process.platform });
      expect(simEntry().args).toEqual(['--snapshot-blob', join(build!, SIM_SNAPSHOT_BLOB)]);
    },
  );

  test.skipIf(!build)(
    'answers the handshake, manifest, tool list and a capability call as the bundle does, with its own ids',
    async () => {
      const [snap, snap2, bundle] = await Promise.all([
        sim(simSnapshotArgs(build!)!),
        sim(simSnapshotArgs(build!)!),
        sim([join(build!, SIM_BUNDLE)]),
      ]);
      const [a, b, c] = await Promise.all([transcript(snap), transcript(snap2), transcript(bundle)]);
      expect(a.call.isError).toBe(false);
      expect(a.call.body['status']).toBe('completed');
      expect(stable(a)).toEqual(stable(c));
      expect(a.manifest).toEqual(c.manifest);
      expect(a.tools).toEqual(c.tools);
      // Ids come from the CSPRNG at run time, not from state frozen into the snapshot.
      expect(a.call.body['command_id']).not.toBe(b.call.body['command_id']);
      expect(a.call.body['session_id']).not.toBe(b.call.body['session_id']);
    },
  );

  test('a blob recorded for another node version, or without its record, is not used: the bundle starts', () => {
    const tree = mkdtempSync(join(tmpdir(), 'mhs-sim-snapshot-'));
    try {
      mkdirSync(join(tree, 'src/sim'), { recursive: true });
      writeFileSync(join(tree, SIM_SNAPSHOT_BLOB), 'not a blob');
      expect(simStartArgs(tree)).toEqual([join(tree, SIM_BUNDLE)]);
      const meta = { node: process.version, arch: process.arch, platform: process.platform };
      writeFileSync(join(tree, SIM_SNAPSHOT_META), JSON.stringify({ ...meta, node: 'v0.0.1' }));
      expect(simStartArgs(tree)).toEqual([join(tree, SIM_BUNDLE)]);
      writeFileSync(join(tree, SIM_SNAPSHOT_META), JSON.stringify(meta));
      expect(simStartArgs(tree)).toEqual(['--snapshot-blob', join(tree, SIM_SNAPSHOT_BLOB)]);
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });
});
