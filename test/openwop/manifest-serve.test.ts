// Guarantees (RFC 0070 wiring): `mhs-host serve --agent-packs DIR [--agent-script FILE]` installs the agent packs
// of DIR in the real server process (each refused pack reported on stderr with its stable code), advertises
// agents.manifestRuntime and agentRuntime together in a discovery document that validates, and dispatches an
// installed agent over REST as a child run whose result is harvested. A server restarted on the same store with an
// empty packs folder still has the installed agents (durable registry). Without the flag neither family is built.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildServiceFamilies } from '../../src/cli/service-families.js';
import { RealClock } from '../../src/core/index.js';
import { openDb } from '../../src/ledger/index.js';
import { openwopSchemas, schemaId } from '../../src/openwop/schemas.js';
import { mergeCapabilities } from '../../src/openwop/service-family.js';
import { client, makeToken, serve, tempDb } from '../server/serve-helpers.js';
import type { Served } from '../server/serve-helpers.js';
import { ANALYST, dispatchWorkflow, packsDir } from './manifest-kit.js';

type Snapshot = Awaited<ReturnType<ReturnType<typeof client>['until']>>;

const running: Served[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop();
});

async function dispatchOverRest(srv: Served, token: string, id: string, opToken: string): Promise<Snapshot> {
  const c = client(srv.url, token);
  const ops = client(srv.url, opToken);
  expect((await ops.post('/v1/workflows', dispatchWorkflow(id, [ANALYST], 'S-9'))).status).toBe(201);
  const run = await c.post('/v1/runs', { workflowId: id });
  expect(run.status).toBe(201);
  return c.until(run.body.runId, (s) => s.status === 'completed' || s.status === 'failed');
}

describe('serve --agent-packs', () => {
  it('installs packs, advertises manifestRuntime + agentRuntime, dispatches an agent; the registry survives a restart', async () => {
    const db = tempDb();
    const token = await makeToken(db);
    const opToken = await makeToken(db, 'operator', 'packs-op');
    const scriptDir = mkdtempSync(join(tmpdir(), 'mhs-agent-script-'));
    const script = join(scriptDir, 'script.json');
    writeFileSync(
      script,
      JSON.stringify({
        turns: [{ tool_calls: [{ tool: 'openwop:echo', arguments: { q: 1 } }] }, { final: '{"verdict": "pass"}' }],
      }),
    );
    const srv = await serve(db, ['--no-mhs', '--no-workflows', '--agent-packs', packsDir(), '--agent-script', script]);
    running.push(srv);
    expect(srv.output()).toMatch(/agent pack vendor\.bad\.xnamespace not installed: agent_pack_namespace_violation/);
    expect(srv.output()).toMatch(/agent pack vendor\.bad\.xlibrary not installed: agent_prompt_unresolved/);
    const doc = (await client(srv.url, token).get('/.well-known/openwop')).body;
    expect(openwopSchemas().check(schemaId('capabilities'), doc)).toEqual([]);
    expect(doc.agents.manifestRuntime).toEqual({ supported: true, handoffValidation: true, installScope: 'host' });
    expect(doc.agentRuntime).toEqual({ supported: true });
    const snap = await dispatchOverRest(srv, token, 'serve-dispatch', opToken);
    expect(snap.status).toBe('completed');
    expect(snap.variables.verdict).toEqual({ verdict: 'pass' });
    await running.pop()!.stop();

    const empty = mkdtempSync(join(tmpdir(), 'mhs-packs-empty-'));
    const again = await serve(db, ['--no-mhs', '--no-workflows', '--agent-packs', empty, '--agent-script', script]);
    running.push(again);
    const snap2 = await dispatchOverRest(again, token, 'serve-dispatch-again', opToken);
    expect([snap2.status, snap2.variables.verdict]).toEqual(['completed', { verdict: 'pass' }]);
  });

  it('without the flag builds neither family; a missing packs folder is a config error', async () => {
    const db = await openDb(tempDb());
    try {
      const families = await buildServiceFamilies({}, db, new RealClock(), () => undefined);
      const doc = mergeCapabilities(...families.map((f) => f.capabilities())) as {
        agents: Record<string, unknown>;
        agentRuntime?: unknown;
      };
      expect([doc.agents.manifestRuntime, doc.agentRuntime]).toEqual([undefined, undefined]);
      await expect(
        buildServiceFamilies({ agentPacks: join(tmpdir(), 'no-such-packs') }, db, new RealClock(), () => undefined),
      ).rejects.toMatchObject({ code: 'MHS.HOST.CONFIG_INVALID' });
    } finally {
      await db.close();
    }
  });
});
