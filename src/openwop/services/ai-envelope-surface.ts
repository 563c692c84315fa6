/** `ctx.aiEnvelope` (RFC 0144 §aiEnvelope): model generation as an envelope (ai-envelope.schema.json). */
export interface AiEnvelopeSurface {
  generate(request: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Present when, and only when, the host advertises `aiEnvelope.await`. */
  await?: (envelopeId: string) => Promise<Record<string, unknown>>;
}
