// Guarantees (RFC 0144 §promptLibrary, RFC 0027): the prompt library table works on SQLite and, when MHS_TEST_PG_URL
// is set, PostgreSQL: a template is returned verbatim, versions order by SemVer precedence (1.10.0 after 1.9.0, a
// pre-release before its release), a changed body under a stored version is refused with prompt_template_conflict,
// the table is append-only in the database, and the all-four-kinds fixture completes on each backend.
import { afterEach, describe, expect, it } from 'vitest';
import { isAppendOnlyViolation } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/index.js';
import { createOpenwopHost } from '../../src/openwop/host.js';
import { openwopSchemas } from '../../src/openwop/schemas.js';
import { createPromptLibraryFamily } from '../../src/openwop/services/prompt-library-family.js';
import { PromptStore } from '../../src/openwop/services/prompt-store.js';
import { BACKENDS } from '../ledger/helpers.js';
import type { Backend } from '../ledger/helpers.js';
import { clock, freshDb } from './service-test-kit.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const open = (backend: Backend): Promise<Db> => freshDb(backend, cleanups);

const t = (version: string, text = `v${version}`) => ({
  templateId: 'acme.order',
  version,
  kind: 'system' as const,
  text,
  tags: ['b', 'a'],
});

describe.each(BACKENDS)('prompt store on $name', (backend) => {
  it('returns templates verbatim, orders versions by SemVer and refuses a changed body', async () => {
    const store = new PromptStore(await open(backend), clock);
    await store.init();
    for (const v of ['1.9.0', '1.10.0', '1.10.0-rc.1', '0.1.0']) expect(await store.put(t(v), 'test')).toBe('stored');
    expect(await store.put(t('1.9.0'), 'test')).toBe('unchanged');
    expect(await store.versions('acme.order')).toEqual(['0.1.0', '1.9.0', '1.10.0-rc.1', '1.10.0']);
    expect(await store.get('acme.order', '1.10.0')).toEqual(t('1.10.0'));
    await expect(store.put(t('1.9.0', 'changed'), 'test')).rejects.toMatchObject({ code: 'prompt_template_conflict' });
    await expect(store.put({ templateId: 'acme.order', kind: 'system' }, 'test')).rejects.toMatchObject({
      code: 'prompt_template_invalid',
    });
    expect(await store.count()).toBe(4);
  });

  it('is append-only in the database', async () => {
    const db = await open(backend);
    const store = new PromptStore(db, clock);
    await store.init();
    await store.put(t('1.0.0'), 'test');
    const err = await db.run("UPDATE openwop_prompt_templates SET template = '{}'").catch((e: unknown) => e);
    expect(isAppendOnlyViolation(err)).toBe(true);
    expect((await store.get('acme.order', '1.0.0'))?.text).toBe('v1.0.0');
  });

  it('runs conformance-prompt-all-four-kinds with a schema-valid log', async () => {
    const db = await open(backend);
    const family = await createPromptLibraryFamily({ db, clock });
    const host = await createOpenwopHost({ db, clock, workflowsDir: false, families: [family] });
    cleanups.push(() => host.close(100));
    const { run } = await host.runs.createRun({ workflowId: 'conformance-prompt-all-four-kinds' }, { principal: 't' });
    expect(await host.runs.waitTerminal(run.runId)).toBe('completed');
    const events = await host.store.events(run.runId);
    expect(events.flatMap((e) => openwopSchemas().checkEvent(e))).toEqual([]);
    expect(events.filter((e) => e.type === 'prompt.composed')).toHaveLength(4);
  });
});
