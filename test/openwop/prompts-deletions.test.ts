// Guarantees (RFC 0028 §A deletePromptTemplate over the append-only store): on SQLite and, when MHS_TEST_PG_URL is
// set, PostgreSQL, deleting a template tombstones every version in one transaction: `versions` and `list` no longer
// return it, a pinned `get` still does (a recorded run replays the same body), a version stored after the delete is
// listed, the tombstone table is itself append-only, and text above maxTemplateBytes (UTF-8 bytes) is refused with
// prompt_template_invalid.
import { afterEach, describe, expect, it } from 'vitest';
import { isAppendOnlyViolation } from '../../src/ledger/index.js';
import type { Db } from '../../src/ledger/index.js';
import { MAX_TEMPLATE_BYTES, PromptStore } from '../../src/openwop/services/prompt-store.js';
import { BACKENDS } from '../ledger/helpers.js';
import type { Backend } from '../ledger/helpers.js';
import { clock, freshDb } from './service-test-kit.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const open = (backend: Backend): Promise<Db> => freshDb(backend, cleanups);

const t = (templateId: string, version: string, text = `${templateId} ${version}`) => ({
  templateId,
  version,
  kind: 'user' as const,
  text,
});

describe.each(BACKENDS)('prompt deletions on $name', (backend) => {
  it('hides every version from versions/list but keeps pinned gets; later versions are listed', async () => {
    const db = await open(backend);
    const store = new PromptStore(db, clock);
    await store.init();
    for (const v of ['1.0.0', '1.1.0']) await store.put(t('acme.memo', v), 'user');
    await store.put(t('acme.keep', '1.0.0'), 'file:keep.json');
    expect(await store.remove('acme.memo')).toEqual(['1.0.0', '1.1.0']);
    expect(await store.versions('acme.memo')).toEqual([]);
    expect((await store.list()).map((s) => s.template.templateId)).toEqual(['acme.keep']);
    expect(await store.get('acme.memo', '1.1.0')).toEqual(t('acme.memo', '1.1.0'));
    expect(await store.remove('acme.memo')).toEqual([]);

    await store.put(t('acme.memo', '2.0.0'), 'user');
    expect(await store.versions('acme.memo')).toEqual(['2.0.0']);
    const listed = await store.list();
    expect(listed.map((s) => [s.template.templateId, s.template.version, s.source])).toEqual([
      ['acme.keep', '1.0.0', 'file:keep.json'],
      ['acme.memo', '2.0.0', 'user'],
    ]);

    const err = await db.run('DELETE FROM openwop_prompt_deletions').catch((e: unknown) => e);
    expect(isAppendOnlyViolation(err)).toBe(true);
    expect(await store.versions('acme.memo')).toEqual(['2.0.0']);
  });

  it('refuses text above maxTemplateBytes counted in UTF-8 bytes', async () => {
    const store = new PromptStore(await open(backend), clock);
    await store.init();
    const chars = MAX_TEMPLATE_BYTES / 2 + 1; // 2 bytes each: within the schema's character cap, above the byte cap
    await expect(store.put(t('acme.big', '1.0.0', 'é'.repeat(chars)), 'user')).rejects.toMatchObject({
      code: 'prompt_template_invalid',
    });
    expect(await store.put(t('acme.big', '1.0.0', 'e'.repeat(MAX_TEMPLATE_BYTES)), 'user')).toBe('stored');
  });
});
