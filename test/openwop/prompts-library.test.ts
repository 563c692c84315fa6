// Guarantees (RFC 0144 §promptLibrary, RFC 0027/0029): the prompt library is durable in the host's store and seeded
// from validated template files (a bad file is refused with a stable code, the others load); ctx.promptLibrary.get
// returns the pinned version verbatim and fails the node (never substitutes) for an unpinned or unknown ref; the
// conformance-prompt-all-four-kinds fixture runs with one agent.promptResolved per kind before the prompt.composed
// events, every event schema-valid; a resumed node keeps the pin it recorded even when a newer version was added.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/ledger/index.js';
import type { NodeModule } from '../../src/openwop/node-registry.js';
import { createPromptLibraryFamily, BUILTIN_PROMPTS_DIR } from '../../src/openwop/services/prompt-library-family.js';
import type { PromptLibraryFamily } from '../../src/openwop/services/prompt-library-family.js';
import {
  HostFixture,
  clock,
  closedAfterEach,
  expectValidCapabilities,
  expectValidEvents,
  HOLD,
  oneNode,
  resolveWhenPending,
  runErrorCode,
  waitForEvent,
} from './service-test-kit.js';

const fixtures = closedAfterEach<HostFixture>();

const getNode: NodeModule = {
  typeId: 'test.prompt-get',
  requires: ['promptLibrary'],
  async execute(ctx) {
    return { outputs: { entry: await ctx.promptLibrary!.get(String(ctx.node.config.ref)) } };
  },
};

function tmpDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'mhs-prompts-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const tpl = (id: string, version: string, text: string, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ templateId: id, version, kind: 'user', text, ...extra });

async function start(opts: { dirs?: string[]; nodes?: NodeModule[]; observability?: 'hashed' | 'full' } = {}) {
  let family: PromptLibraryFamily | undefined;
  const fx = new HostFixture(async (db: Db) => {
    family = await createPromptLibraryFamily({
      db,
      clock,
      ...(opts.dirs ? { dirs: opts.dirs } : {}),
      ...(opts.observability ? { observability: opts.observability } : {}),
    });
    return { families: [family], nodes: [getNode, ...(opts.nodes ?? [])] };
  });
  fixtures.push(fx);
  await fx.open();
  return { fx, family: () => family! };
}

describe('prompt library family (RFC 0144 §promptLibrary)', () => {
  it('runs conformance-prompt-all-four-kinds: agent.promptResolved per kind, then prompt.composed per ref', async () => {
    const { fx } = await start({ observability: 'full' });
    const host = fx.host;
    const doc = expectValidCapabilities(host);
    expect(doc.promptLibrary).toEqual({ supported: true });
    expect(doc.prompts).toMatchObject({
      supported: true,
      templateKinds: ['system', 'user', 'few-shot', 'schema-hint'],
    });
    expect(host.loaded.fixtures).toContain('conformance-prompt-all-four-kinds');

    const { run } = await host.runs.createRun({ workflowId: 'conformance-prompt-all-four-kinds' }, { principal: 't' });
    expect(await host.runs.waitTerminal(run.runId)).toBe('completed');
    const events = await expectValidEvents(host, run.runId);
    const resolved = events.filter((e) => e.type === 'agent.promptResolved');
    expect(resolved.map((e) => e.payload.kind).sort()).toEqual(['few-shot', 'schema-hint', 'system', 'user']);
    expect(resolved.map((e) => e.payload.resolved)).toEqual([
      'prompt:conformance.prompt.writer-system@1.0.0',
      'prompt:conformance.prompt.schema-hint@1.0.0',
      'prompt:conformance.prompt.few-shot@1.0.0',
      'prompt:conformance.prompt.writer-system@1.0.0',
    ]);
    for (const e of resolved) {
      expect((e.payload.chain as Array<{ layer: string; applied: boolean }>).filter((c) => c.applied)).toEqual([
        expect.objectContaining({ layer: 'node', applied: true }),
      ]);
    }
    const composed = events.filter((e) => e.type === 'prompt.composed');
    expect(composed.flatMap((e) => e.payload.refs as string[])).toEqual(resolved.map((e) => e.payload.resolved));
    const lastResolved = events.lastIndexOf(resolved.at(-1)!);
    expect(events.indexOf(composed[0]!)).toBeGreaterThan(lastResolved);
    // The system body bound the `runId` context variable; the node output is the composition in canonical order.
    expect(composed[0]!.payload.systemPrompt).toBe(`You are a concise technical writer for run ${run.runId}.`);
    const done = events.find((e) => e.type === 'node.completed')!;
    const outputs = done.payload.outputs as { prompt: string; hashes: string[] };
    expect(outputs.prompt.startsWith('You are a concise technical writer')).toBe(true);
    expect(outputs.hashes).toEqual(composed.map((e) => e.payload.hash));
  });

  it('get returns the pinned version verbatim from the durable store, also after a reopen', async () => {
    const { fx } = await start();
    const host = fx.host;
    await host.catalog.register(
      oneNode('get-pinned', {
        typeId: 'test.prompt-get',
        config: { ref: 'prompt:conformance.prompt.schema-hint@1.0.0' },
      }),
    );
    await fx.reopen();
    const { run } = await fx.host.runs.createRun({ workflowId: 'get-pinned' }, { principal: 't' });
    expect(await fx.host.runs.waitTerminal(run.runId)).toBe('completed');
    const events = await expectValidEvents(fx.host, run.runId);
    const entry = (
      events.find((e) => e.type === 'node.completed')!.payload.outputs as { entry: Record<string, unknown> }
    ).entry;
    const file = JSON.parse(readFileSync(join(BUILTIN_PROMPTS_DIR, 'schema-hint.json'), 'utf8')) as { text: string };
    expect(entry).toEqual({
      promptId: 'prompt:conformance.prompt.schema-hint@1.0.0',
      systemPrompt: file.text,
      version: '1.0.0',
      template: file,
    });
  });

  it.each([
    ['prompt:conformance.prompt.schema-hint', 'prompt_ref_unpinned'],
    ['prompt:conformance.prompt.nope@1.0.0', 'prompt_not_found'],
    ['prompt:conformance.prompt.schema-hint@9.9.9', 'prompt_version_pinned'],
    ['writer', 'prompt_ref_invalid'],
  ])('RFC 0144: get(%s) fails the node with %s instead of substituting', async (ref, code) => {
    const { fx } = await start();
    await fx.host.catalog.register(oneNode('get-bad', { typeId: 'test.prompt-get', config: { ref } }));
    const { run } = await fx.host.runs.createRun({ workflowId: 'get-bad' }, { principal: 't' });
    expect(await fx.host.runs.waitTerminal(run.runId)).toBe('failed');
    expect(await runErrorCode(fx.host, run.runId)).toBe(code);
    await expectValidEvents(fx.host, run.runId);
  });

  it('refuses a bad template file with a stable code and still loads the others', async () => {
    const dir = tmpDir({
      'a-good.json': tpl('acme.good', '1.0.0', 'Hello {{name}}'),
      'b-schema.json': JSON.stringify({ templateId: 'Bad Id', version: '1', kind: 'user', text: 'x' }),
      'c-not-json.json': '{ nope',
      'd-good.json': tpl('acme.good', '1.1.0', 'Hi {{name}}'),
    });
    const { family } = await start({ dirs: [dir] });
    expect(family().seeded.loaded).toEqual(
      expect.arrayContaining(['prompt:acme.good@1.0.0', 'prompt:acme.good@1.1.0']),
    );
    expect(family().seeded.refused.map((r) => [r.file.split('/').pop(), r.code])).toEqual([
      ['b-schema.json', 'prompt_template_invalid'],
      ['c-not-json.json', 'prompt_template_invalid'],
    ]);
    expect(await family().store.versions('acme.good')).toEqual(['1.0.0', '1.1.0']);
  });

  it('a stored version is immutable: a changed body under the same version is refused on the next seed', async () => {
    const dir = tmpDir({ 'x.json': tpl('acme.fixed', '1.0.0', 'first') });
    const { fx, family } = await start({ dirs: [dir] });
    writeFileSync(join(dir, 'x.json'), tpl('acme.fixed', '1.0.0', 'second'));
    await fx.reopen();
    expect(family().seeded.refused.map((r) => r.code)).toEqual(['prompt_template_conflict']);
    expect((await family().store.get('acme.fixed', '1.0.0'))?.text).toBe('first');
  });

  it('fails a node whose required template variable has no binding (prompt_variable_unresolved)', async () => {
    const dir = tmpDir({
      'r.json': tpl('acme.req', '1.0.0', 'Topic {{topic}}', {
        variables: [{ name: 'topic', type: 'string', required: true }],
      }),
    });
    const { fx } = await start({ dirs: [dir] });
    await fx.host.catalog.register(
      oneNode('req-var', { typeId: 'local.sample.demo.mock-ai', config: { userPromptRef: 'prompt:acme.req@1.0.0' } }),
    );
    const { run } = await fx.host.runs.createRun({ workflowId: 'req-var' }, { principal: 't' });
    expect(await fx.host.runs.waitTerminal(run.runId)).toBe('failed');
    expect(await runErrorCode(fx.host, run.runId)).toBe('prompt_variable_unresolved');
  });

  it('binds input, variable and override sources; an unpinned node ref resolves to the latest version', async () => {
    const dir = tmpDir({
      'v1.json': tpl('acme.mix', '1.0.0', 'old'),
      'v2.json': tpl('acme.mix', '1.2.0', '{{a}}/{{b}}/{{c}}', {
        variables: [
          { name: 'a', type: 'string', required: true },
          { name: 'b', type: 'string', required: true, source: 'variable' },
          { name: 'c', type: 'string', required: false, defaultValue: 'dflt' },
        ],
      }),
    });
    const { fx } = await start({ dirs: [dir] });
    await fx.host.catalog.register(
      oneNode(
        'mix',
        {
          typeId: 'local.sample.demo.mock-ai',
          config: {
            userPromptRef: 'prompt:acme.mix',
            systemPromptRef: { templateId: 'acme.mix', version: '1.2.0', variableOverrides: { c: 'ov' } },
          },
          inputs: { a: { type: 'static', value: 'in' } },
        },
        { variables: [{ name: 'b', type: 'string', defaultValue: 'var' }] },
      ),
    );
    const { run } = await fx.host.runs.createRun({ workflowId: 'mix' }, { principal: 't' });
    expect(await fx.host.runs.waitTerminal(run.runId)).toBe('completed');
    const events = await expectValidEvents(fx.host, run.runId);
    expect(events.filter((e) => e.type === 'agent.promptResolved').map((e) => e.payload.resolved)).toEqual([
      'prompt:acme.mix@1.2.0',
      null,
      null,
      'prompt:acme.mix@1.2.0',
    ]);
    const out = events.find((e) => e.type === 'node.completed')!.payload.outputs as { prompt: string };
    expect(out.prompt).toBe('in/var/ov\n\nin/var/dflt');
  });

  it('a node resumed after a restart keeps its recorded pin although a newer version was seeded meanwhile', async () => {
    const dir = tmpDir({ 'v1.json': tpl('acme.live', '1.0.0', 'one') });
    const composeThenWait: NodeModule = {
      typeId: 'test.compose-wait',
      requires: ['promptLibrary'],
      async execute(ctx) {
        const first = await family().resolver.composeForNode(ctx);
        await ctx.interrupt(HOLD);
        const again = await family().resolver.composeForNode(ctx);
        return { outputs: { first: first.text, again: again.text } };
      },
    };
    const { fx, family } = await start({ dirs: [dir], nodes: [composeThenWait] });
    await fx.host.catalog.register(
      oneNode('live', { typeId: 'test.compose-wait', config: { userPromptRef: 'prompt:acme.live' } }),
    );
    const { run } = await fx.host.runs.createRun({ workflowId: 'live' }, { principal: 't' });
    await waitForEvent(fx.host, run.runId, (e) => e.type === 'interrupt.requested');
    writeFileSync(join(dir, 'v2.json'), tpl('acme.live', '2.0.0', 'two'));
    await fx.reopen();
    await waitForEvent(fx.host, run.runId, (e) => e.type === 'run.resuming');
    await resolveWhenPending(fx.host, run.runId, { action: 'accept' });
    expect(await fx.host.runs.waitTerminal(run.runId)).toBe('completed');
    const events = await expectValidEvents(fx.host, run.runId);
    expect(events.filter((e) => e.type === 'agent.promptResolved').map((e) => e.payload.resolved)).toEqual([
      null,
      null,
      null,
      'prompt:acme.live@1.0.0',
    ]);
    expect(events.filter((e) => e.type === 'prompt.composed')).toHaveLength(1);
    expect(events.find((e) => e.type === 'node.completed')!.payload.outputs).toEqual({ first: 'one', again: 'one' });
  });

  it('a host without the family advertises no prompts and does not load the fixture', async () => {
    const fx = new HostFixture(async () => ({}));
    fixtures.push(fx);
    const host = await fx.open();
    const doc = expectValidCapabilities(host);
    expect(doc.prompts).toBeUndefined();
    expect(doc.promptLibrary).toBeUndefined();
    expect(host.loaded.fixtures).not.toContain('conformance-prompt-all-four-kinds');
  });
});
