// Guarantees (RFC 0144 promptLibrary + aiEnvelope together): `local.ai.callPrompt` composes the node's PromptRefs
// (agent.promptResolved, prompt.composed) and sends the composed bodies to ctx.aiEnvelope.generate, taking the
// envelope kind from the system template's modelHints; without the aiEnvelope family the node fails
// host_capability_missing instead of running without a model.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ServiceFamily } from '../../src/openwop/service-family.js';
import { createAiEnvelopeFamily } from '../../src/openwop/services/ai-envelope-family.js';
import type { EnvelopeModel } from '../../src/openwop/services/ai-envelope-model.js';
import { createPromptLibraryFamily } from '../../src/openwop/services/prompt-library-family.js';
import { HostFixture, clock, closedAfterEach, expectValidEvents, oneNode, runErrorCode } from './service-test-kit.js';

const fixtures = closedAfterEach<HostFixture>();

const seen: string[][] = [];
const model: EnvelopeModel = {
  name: 'echo',
  async next(req) {
    seen.push(req.messages.map((m) => String(m.content)));
    return { kind: 'final', text: JSON.stringify({ type: 'vendor.mhs.summary', payload: { title: 'ok' } }) };
  },
};

function templates(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mhs-call-'));
  const write = (name: string, t: Record<string, unknown>) => writeFileSync(join(dir, name), JSON.stringify(t));
  write('s.json', {
    templateId: 'acme.sum-system',
    version: '1.0.0',
    kind: 'system',
    text: 'You summarise lab notes.',
    modelHints: { envelopeType: 'vendor.mhs.summary' },
  });
  write('u.json', {
    templateId: 'acme.sum-user',
    version: '1.0.0',
    kind: 'user',
    text: 'Notes: {{notes}}',
    variables: [{ name: 'notes', type: 'string', required: true }],
  });
  return dir;
}

async function start(withAi: boolean): Promise<HostFixture> {
  const dir = templates();
  const fx = new HostFixture(async (db) => {
    const families: ServiceFamily[] = [await createPromptLibraryFamily({ db, clock, dirs: [dir] })];
    if (withAi)
      families.push(
        createAiEnvelopeFamily({
          model,
          envelopes: {
            'vendor.mhs.summary': { type: 'object', required: ['title'], properties: { title: { type: 'string' } } },
          },
        }),
      );
    return { families };
  });
  fixtures.push(fx);
  await fx.open();
  await fx.host.catalog.register(
    oneNode('call', {
      typeId: 'local.ai.callPrompt',
      config: { systemPromptRef: 'prompt:acme.sum-system@1.0.0', userPromptRef: 'prompt:acme.sum-user@1.0.0' },
      inputs: { notes: { type: 'static', value: 'pump P1 primed' } },
    }),
  );
  return fx;
}

describe('local.ai.callPrompt', () => {
  it('sends the composed prompts to the model and returns its envelope', async () => {
    const fx = await start(true);
    const { run } = await fx.host.runs.createRun({ workflowId: 'call' }, { principal: 't' });
    expect(await fx.host.runs.waitTerminal(run.runId)).toBe('completed');
    const events = await expectValidEvents(fx.host, run.runId);
    expect(events.filter((e) => e.type === 'prompt.composed')).toHaveLength(2);
    expect(seen.at(-1)![0]).toContain('You summarise lab notes.');
    expect(seen.at(-1)![1]).toBe('Notes: pump P1 primed');
    expect(events.find((e) => e.type === 'node.completed')!.payload.outputs).toMatchObject({
      envelopeType: 'vendor.mhs.summary',
      payload: { title: 'ok' },
      refs: ['prompt:acme.sum-system@1.0.0', 'prompt:acme.sum-user@1.0.0'],
    });
  });

  it('fails host_capability_missing on a host without the aiEnvelope family', async () => {
    const fx = await start(false);
    const { run } = await fx.host.runs.createRun({ workflowId: 'call' }, { principal: 't' });
    expect(await fx.host.runs.waitTerminal(run.runId)).toBe('failed');
    expect(await runErrorCode(fx.host, run.runId)).toBe('host_capability_missing');
  });
});
