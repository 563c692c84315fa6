// Guarantees (RFC 0070 / RFC 0003 installAgents): the durable AgentRegistry behaves the same on every store backend
// (SQLite always, PostgreSQL when MHS_TEST_PG_URL is set): packs installed from a folder are found again, with their
// pinned prompts, by a registry opened later on the same store location without the folder, and bad packs are
// refused with the same codes.
import { afterEach, describe, expect, it } from 'vitest';
import { openDb } from '../../src/ledger/index.js';
import { createManifestRuntimeFamily } from '../../src/openwop/agents/manifest-runtime-family.js';
import type { AgentModel } from '../../src/openwop/agents/manifest-agent-node.js';
import { BACKENDS } from '../ledger/helpers.js';
import { ANALYST, EXPECTED_REFUSALS, STRICT, packsDir } from './manifest-kit.js';
import { clock } from './service-test-kit.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const model: AgentModel = { name: 'none', next: () => Promise.reject(new Error('not asked')) };

describe.each(BACKENDS)('agent registry on $name', (backend) => {
  it('installs from a folder and is rebuilt from the store without it', async () => {
    const store = await backend.fresh();
    cleanups.push(store.cleanup);
    const db = await openDb(store.location);
    const first = await createManifestRuntimeFamily({ db, clock, packsDir: packsDir(), model });
    await db.close();
    // The prompt library is not given here: the prompt-library pack is refused, the others install.
    expect(first.installed).toEqual(['vendor.acme.lab@1.0.0']);
    expect(first.refused.find((r) => r.pack === 'vendor.acme.lib')?.code).toBe('agent_prompt_unresolved');
    for (const [pack, code] of Object.entries(EXPECTED_REFUSALS))
      expect(first.refused.find((r) => r.pack.endsWith(pack))?.code).toBe(code);

    const again = await openDb(store.location);
    cleanups.push(() => again.close());
    const second = await createManifestRuntimeFamily({ db: again, clock, model });
    expect(second.registry.list().map((a) => [a.manifest.agentId, a.systemPromptSource])).toEqual([
      [ANALYST, 'file:prompts/analyst.md'],
      [STRICT, 'inline'],
    ]);
    expect(second.registry.get(ANALYST)!.taskSchema).toMatchObject({ required: ['sample'] });
  });
});
