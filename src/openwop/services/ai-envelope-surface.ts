/**
 * `ctx.aiEnvelope` (RFC 0144 §aiEnvelope; host-capabilities.md §host.aiEnvelope; ai-envelope.md): one model
 * generation returned as a typed envelope. `await` is present when, and only when, the host advertises
 * `aiEnvelope.await`.
 */

/** The request of `generate` (host-capabilities.md §host.aiEnvelope). */
export interface AiEnvelopeRequest {
  systemPrompt: string;
  /** The kind asked for; must be listed in `supportedEnvelopes`. */
  envelopeType: string;
  userMessage?: string;
  provider?: string;
  model?: string;
  temperature?: number;
  maxTokens?: number;
  variables?: Record<string, unknown>;
  context?: Record<string, unknown>;
  cachePrefixId?: string;
  /** Unique per generation within the node execution; a replay with the same key returns the recorded envelope. */
  idempotencyKey: string;
}

/** The projection `generate` resolves to, plus the full envelope (ai-envelope.schema.json, additive). */
export interface AiEnvelopeResult {
  envelopeType: string;
  payload: unknown;
  envelopeId: string;
  usage?: { inputTokens: number; outputTokens: number };
  model?: string;
  envelope: Record<string, unknown>;
}

/** The `ctx.aiEnvelope` surface. */
export interface AiEnvelopeSurface {
  /**
   * Rejects with a `NodeFailure`: `validation_error` (bad request), `unknown_envelope_kind`,
   * `envelope_invalid`, `envelope_correlation_conflict`, `provider_unavailable`, `cap_breached`.
   */
  generate(request: AiEnvelopeRequest): Promise<AiEnvelopeResult>;
  /** Present when, and only when, the host advertises `aiEnvelope.await`. */
  await?: (request: { envelopeType: string; timeoutMs: number }) => Promise<Record<string, unknown>>;
}
