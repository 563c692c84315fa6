// Guarantees (issue 15 "the LLM cache-key recipe", issue 17 item 3; OpenWOP replay.md §"LLM cache-key recipe" §A-§B,
// RFC 0150 §C, RFC 0041 §A): the recipe reproduces every published golden vector (its canonical preimage byte for
// byte and its digest), including the pairs whose relation is the point (tool order does not matter, message order
// and Unicode form do); transport-only fields never change a key; the input reader refuses what the seam must
// refuse with `invalid_argument`.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { jcs } from '../../src/core/index.js';
import {
  LLM_CACHE_KEY_RECIPE,
  llmCacheKey,
  parseLlmCacheKeyInput,
  semanticRequest,
} from '../../src/ai/llm-cache-key.js';

interface Vector {
  id: string;
  input: Record<string, unknown>;
  canonical: string;
  digest: string;
}
const doc = JSON.parse(
  readFileSync(new URL('../../vendor/openwop/vectors/semantic-request-digest-v2.json', import.meta.url), 'utf8'),
) as { recipe: string; vectors: Vector[] };
const byId = new Map(doc.vectors.map((v) => [v.id, v]));
const keyOf = (id: string) => llmCacheKey(parseLlmCacheKeyInput(byId.get(id)!.input));

describe('the LLM cache-key recipe over the published vectors', () => {
  it('stamps the recipe the vectors name', () => {
    expect(LLM_CACHE_KEY_RECIPE).toBe(doc.recipe);
  });

  it.each(doc.vectors.map((v) => [v.id, v] as const))('%s: canonical preimage and digest', (_id, v) => {
    const input = parseLlmCacheKeyInput(v.input);
    expect(jcs(semanticRequest(input))).toBe(v.canonical);
    expect(llmCacheKey(input)).toBe(v.digest);
  });

  it('keeps the paired relations: tool order normalised, message order and Unicode form not', () => {
    expect(keyOf('tools-reversed-same-digest')).toBe(keyOf('tools-sorted-by-name'));
    expect(keyOf('tools-code-unit-order-reversed')).toBe(keyOf('tools-code-unit-order'));
    expect(keyOf('message-order-reversed')).not.toBe(keyOf('message-order-is-semantic'));
    expect(keyOf('non-ascii-composed')).not.toBe(keyOf('non-ascii-not-normalized'));
  });
});

describe('what the key ignores and what it refuses', () => {
  const base = { provider: 'openai', model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }], temperature: 0.5 };

  it('is unchanged by transport-only fields', () => {
    const noisy = {
      ...base,
      stream: true,
      metadata: { traceId: 'abcd' },
      user: 'u',
      'x-request-id': 'req-1',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tenantId: 't',
      runId: 'r',
      timeoutMs: 30_000,
    };
    expect(llmCacheKey(parseLlmCacheKeyInput(noisy))).toBe(llmCacheKey(parseLlmCacheKeyInput(base)));
  });

  it.each([
    ['temperature', { temperature: 1 }],
    ['seed', { seed: 43 }],
    ['stop', { stop: ['HALT'] }],
    ['maxOutputTokens', { maxOutputTokens: 10 }],
    ['providerOptions', { providerOptions: { 'vendor.openai.tool_choice': 'required' } }],
    ['responseFormat', { responseFormat: { type: 'json' } }],
  ])('changes with %s', (_f, extra) => {
    expect(llmCacheKey(parseLlmCacheKeyInput({ ...base, ...extra }))).not.toBe(
      llmCacheKey(parseLlmCacheKeyInput(base)),
    );
  });

  it.each([
    ['no provider', { model: 'm', messages: [] }],
    ['an empty model', { provider: 'p', model: '', messages: [] }],
    ['messages not an array', { provider: 'p', model: 'm', messages: 'hi' }],
    ['an unknown role', { provider: 'p', model: 'm', messages: [{ role: 'bot', content: 'x' }] }],
    ['a numeric content', { provider: 'p', model: 'm', messages: [{ role: 'user', content: 1 }] }],
    ['a string temperature', { ...base, temperature: 'hot' }],
    ['a tool without parameters', { ...base, tools: [{ name: 't' }] }],
  ])('refuses %s with invalid_argument', (_why, body) => {
    expect(() => parseLlmCacheKeyInput(body)).toThrowError(expect.objectContaining({ code: 'invalid_argument' }));
  });
});
