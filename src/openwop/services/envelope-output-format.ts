import type { EnvelopeOutputFormat } from './ai-envelope-model.js';
import type { EnvelopeCatalog } from './envelope-validation.js';

/** The `error` envelope's payload (schemas/envelopes/error), inlined for a provider. */
const ERROR_PAYLOAD = {
  type: 'object',
  required: ['code', 'message'],
  properties: { code: { type: 'string' }, message: { type: 'string' } },
};

/**
 * The structured output a provider is asked for when `kind` is requested: `{type, payload}` where `type` is the kind
 * or `error` (the model's deliberate failure report) and `payload` the kind's payload schema or the error payload.
 * An object root with an `anyOf` payload (no `oneOf`: ai-envelope.md §Variant payload discrimination), so both
 * Chat Completions' json_schema and a Messages tool `input_schema` take it. A universal kind's vendored schema is a
 * `$ref` a provider cannot resolve: its payload is then any object, and the host still validates it.
 */
export function envelopeOutputFormat(catalog: EnvelopeCatalog, kind: string): EnvelopeOutputFormat {
  const own = catalog.payloadSchema(kind);
  const payload = own && !('$ref' in own) ? own : { type: 'object' };
  const kinds = kind === 'error' ? ['error'] : [kind, 'error'];
  return {
    name: 'envelope',
    schema: {
      type: 'object',
      required: ['type', 'payload'],
      properties: {
        type: { type: 'string', enum: kinds },
        payload: kind === 'error' ? ERROR_PAYLOAD : { anyOf: [payload, ERROR_PAYLOAD] },
      },
      additionalProperties: false,
    },
  };
}
