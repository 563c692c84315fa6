/**
 * RFC 0041 §D advertisement: `multiAgent.executionModel.replayDeterminism {supported, refusalDivergenceEmission}`,
 * added only to a document that already advertises `multiAgent.executionModel.supported` (the block lives there and
 * the schema requires `supported`/`version` beside it). Behaviour: `nondeterministic: true` nodes replay from the
 * log (replay.ts), `core.ai.structuredOutput` refusal divergence (nodes/structured-output-node.ts); tested in
 * test/openwop/replay-phase4.test.ts. `version` is left as the families set it (see docs/replay.md).
 */
export function withReplayDeterminism(caps: Record<string, unknown>): Record<string, unknown> {
  const multiAgent = caps.multiAgent as { executionModel?: Record<string, unknown> } | undefined;
  const em = multiAgent?.executionModel;
  if (em?.supported !== true) return caps;
  return {
    ...caps,
    multiAgent: {
      ...multiAgent,
      executionModel: { ...em, replayDeterminism: { supported: true, refusalDivergenceEmission: true } },
    },
  };
}
