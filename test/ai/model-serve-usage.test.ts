// Guarantees (issue 15, RFC 0026 §B): `serve --model openai-compatible:<model> --base-url ...` (the service families
// `buildServiceFamilies` builds from those flags) puts the real provider behind ctx.aiEnvelope: a node's generate call
// goes to a local Chat Completions server (no network) as a streamed request with the envelope prompts and no tools,
// the answer validates as the envelope, and the run log's `provider.usage` event carries provider
// `openai-compatible`, the model id and the server's own token counts (not an estimate); the host advertises
// providerUsage; the API key is in no run event and not in the store file. A bad `--model` is MHS.HOST.MODEL_CONFIG.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { buildServiceFamilies } from '../../src/cli/service-families.js';
import { HostFixture, closedAfterEach, oneNode, runToTerminal, clock } from '../openwop/service-test-kit.js';
import { oaStream } from '../helpers/openai-fixtures.js';
import { genNode, useModelServer } from './envelope-generate-kit.js';

const KEY = 'sk-serve-test-5e4d3c2b1a09f8e7d6c5b4a39281706f';
const model = useModelServer();
const fixtures = closedAfterEach<HostFixture>();

describe('serve --model: ctx.aiEnvelope on a real provider', () => {
  it('provider.usage carries the server token counts; the key is in no event', async () => {
    const answer = JSON.stringify({ type: 'vendor.mhs.summary', payload: { title: 'Pumps' } });
    model
      .server()
      .reply(oaStream({ model: 'lab-llm', pieces: [answer.slice(0, 20), answer.slice(20)], usage: [321, 17] }));
    const fx = new HostFixture(async (db) => ({
      families: await buildServiceFamilies(
        {
          model: 'openai-compatible:lab-llm',
          baseUrl: `${model.server().url}/v1`,
          modelRetries: 0,
          envelopes: model.envelopesFile,
        },
        db,
        clock,
        () => undefined,
        undefined,
        { env: { OPENAI_API_KEY: KEY } },
      ),
      nodes: [genNode],
    }));
    fixtures.push(fx);
    await fx.open();
    await fx.host.catalog.register(oneNode('gen', { typeId: 'test.generate' }));
    const { status, events } = await runToTerminal(fx.host, 'gen');
    expect(status).toBe('completed');

    const req = model.server().requests.at(-1)!;
    expect(req.body).toMatchObject({ model: 'lab-llm', stream: true });
    expect(req.body.tools).toBeUndefined();
    expect(JSON.stringify(req.body.messages)).toContain('pumps');

    const usage = events.filter((e) => e.type === 'provider.usage');
    expect(usage).toHaveLength(1);
    expect(usage[0]!.payload).toMatchObject({
      provider: 'openai-compatible',
      model: 'lab-llm',
      inputTokens: 321,
      outputTokens: 17,
      totalTokens: 338,
    });
    expect(JSON.stringify(events)).not.toContain(KEY);
    expect(readFileSync(fx.file).includes(KEY)).toBe(false);
  });

  it('a bad --model is MHS.HOST.MODEL_CONFIG before any family is built', async () => {
    const fx = new HostFixture(async () => ({}));
    fixtures.push(fx);
    await fx.open();
    await expect(buildServiceFamilies({ model: 'nope:x' }, fx.db, clock, () => undefined)).rejects.toMatchObject({
      code: ErrorCode.HOST_MODEL_CONFIG,
    });
  });
});
