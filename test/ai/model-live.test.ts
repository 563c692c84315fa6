// Guarantees (issue 15): a live smoke test against the real provider APIs, run only when a key is in the
// environment (OPENAI_API_KEY, ANTHROPIC_API_KEY; models MHS_LIVE_OPENAI_MODEL / MHS_LIVE_ANTHROPIC_MODEL). In CI
// and on machines without a key each case is skipped, and its name says why. With a key: one streamed tool call
// comes back as a `tool_calls` turn with the API's real token counts.
import { describe, expect, test } from 'vitest';
import type { ProviderTool } from '../../src/ai/model-provider.js';
import { createModelProvider } from '../../src/ai/providers/create-model-provider.js';
import { parseModelSpec } from '../../src/ai/providers/model-spec.js';

const TOOL: ProviderTool = {
  name: 'mhs__cap__thermostat__cap_thermal_setpoint_v1',
  description: 'Set the thermostat chamber set point in degC (4..95).',
  inputSchema: { type: 'object', properties: { setpoint_c: { type: 'number' } }, required: ['setpoint_c'] },
};
const LIVE = [
  { key: 'OPENAI_API_KEY', spec: `openai:${process.env.MHS_LIVE_OPENAI_MODEL ?? 'gpt-4.1-mini'}` },
  { key: 'ANTHROPIC_API_KEY', spec: `anthropic:${process.env.MHS_LIVE_ANTHROPIC_MODEL ?? 'claude-haiku-4-5'}` },
];

describe('live model providers', () => {
  for (const l of LIVE) {
    const missing = !process.env[l.key];
    const name = missing ? `${l.spec}: skipped, ${l.key} is not set` : `${l.spec}: a live tool call`;
    test.skipIf(missing)(
      name,
      async () => {
        const provider = createModelProvider(parseModelSpec(l.spec), process.env, { maxTokens: 256 });
        const turn = await provider.next({
          messages: [
            { role: 'system', content: 'You operate a lab thermostat through tools.' },
            { role: 'user', content: 'Set the chamber to 37 degC.' },
          ],
          tools: [TOOL],
        });
        expect(turn.kind).toBe('tool_calls');
        if (turn.kind === 'tool_calls')
          expect(turn.calls[0]).toMatchObject({ name: TOOL.name, arguments: { setpoint_c: 37 } });
        expect(turn.usage!.inputTokens).toBeGreaterThan(0);
      },
      60_000,
    );
  }
});
