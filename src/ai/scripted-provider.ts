/**
 * The deterministic scripted provider (the embedded default model): it plays an {@link AgentScript} turn by
 * turn. The turn it plays is the number of assistant messages so far, and references resolve against the tool
 * results in the conversation, so the same conversation always gets the same answer.
 */
import type { AgentScript } from './agent-script.js';
import { fillTemplate, resolveRefs } from './agent-script.js';
import { llmCacheKey } from './llm-cache-key.js';
import type { ModelProvider, ModelRequest, ModelTurn } from './model-provider.js';
import { modelRequestCacheKeyInput } from './providers/wire-cache-key.js';

/** Text of the final message when the script has no turns left. */
export const SCRIPT_END = '(end of script)';

/** A provider that plays a validated script (see `parseAgentScript` / `loadAgentScript`). */
export class ScriptedProvider implements ModelProvider {
  readonly name = 'scripted';
  /** Metered as provider `scripted`, model `script.model` (default `scripted`). */
  readonly meter: { provider: string; model: string };

  constructor(readonly script: AgentScript) {
    this.meter = { provider: 'scripted', model: script.model ?? 'scripted' };
  }

  async next(req: ModelRequest): Promise<ModelTurn> {
    return { ...this.#play(req), cacheKey: llmCacheKey(modelRequestCacheKeyInput(this.meter, req)) };
  }

  #play(req: ModelRequest): ModelTurn {
    const index = req.messages.filter((m) => m.role === 'assistant').length;
    const results = req.messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
    const turn = this.script.turns[index];
    if (!turn) return { kind: 'final', text: SCRIPT_END };
    // Declared token counts are reported verbatim; without them the host estimates (provider-usage.ts).
    const usage = turn.usage
      ? { usage: { inputTokens: turn.usage.inputTokens, outputTokens: turn.usage.outputTokens } }
      : {};
    if ('final' in turn) return { kind: 'final', text: fillTemplate(turn.final, results), ...usage };
    return {
      kind: 'tool_calls',
      ...usage,
      calls: turn.tool_calls.map((c, j) => ({
        id: c.id ?? `call_${index}_${j}`,
        name: c.tool,
        arguments: resolveRefs(c.arguments ?? {}, results) as Record<string, unknown>,
      })),
      ...(turn.text !== undefined ? { text: turn.text } : {}),
    };
  }
}
