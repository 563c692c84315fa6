/**
 * Event types the host writes under their v2 name because the published codemap gives them no v1 spelling: a member
 * of the vendored v2 registered enum (`schemas/v2/run-event.schema.json`, RFC 0171 §A.1) that no row of
 * `spec/v2/event-codemap.json` names on either side. Today that is `negotiation.decided` (RFC 0175 §D.3): the
 * codemap the index stores (117 rows) predates it. The v2 read path passes such a type through unchanged (there is
 * nothing to translate); the v1 read path serves it as written, which v1 readers tolerate ("readers MUST NOT throw
 * on unknown types … ignore unknowns", v1 `RunEventType`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The `negotiationDecided` payload as RFC 0242 quotes the published closed definition
 * (`{ protocol, outcome: accepted | refused, version?, floor?, peerDigest?, reason?, at }`) with §A.1's optional
 * `requested`. The vendored v2 `run-event-payloads.schema.json` (`openwop-sdks` `33f1a23f7a30`) defines
 * `negotiationDecided` without `requested`, so the RFC 0242 shape is transcribed here (field names and optionality as
 * quoted; `at` a date-time) and the v2 payload projection leaves this type as written.
 */
export const NEGOTIATION_DECIDED_PAYLOAD = {
  $id: 'urn:mhs-host:openwop:payload:negotiationDecided',
  type: 'object',
  additionalProperties: false,
  required: ['protocol', 'outcome', 'at'],
  properties: {
    protocol: { enum: ['a2a', 'mcp'] },
    outcome: { enum: ['accepted', 'refused'] },
    requested: { type: 'string', minLength: 1 },
    version: { type: 'string', minLength: 1 },
    floor: { type: 'string', minLength: 1 },
    peerDigest: { type: 'string', minLength: 1 },
    reason: { type: 'string', minLength: 1 },
    at: { type: 'string', format: 'date-time' },
  },
} as const;

/** The payload schema of each v2-native type this host writes. */
export const NATIVE_PAYLOADS: Readonly<Record<string, { $id: string }>> = {
  'negotiation.decided': NEGOTIATION_DECIDED_PAYLOAD,
};

/** The v2-native types of the vendored data under `dir` (`vendor/openwop`): registered in v2, named by no codemap row. */
export function v2NativeTypes(dir: string): ReadonlySet<string> {
  const schema = JSON.parse(readFileSync(join(dir, 'schemas/v2/run-event.schema.json'), 'utf8')) as {
    properties: { type: { oneOf: Array<{ enum?: string[] }> } };
  };
  const codemap = JSON.parse(readFileSync(join(dir, 'spec/v2/event-codemap.json'), 'utf8')) as {
    rows: Array<{ v1: string; v2: string }>;
  };
  const named = new Set(codemap.rows.flatMap((r) => [r.v1, r.v2]));
  const registered = schema.properties.type.oneOf.flatMap((b) => b.enum ?? []);
  return new Set(registered.filter((t) => !named.has(t)));
}
