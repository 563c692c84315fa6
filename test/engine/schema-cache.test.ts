// Guarantees (HOST-031, issue 21 item 7): capability input validators are compiled once per schema digest, so the
// identical schema of many endpoints (other manifest digests, other caches of the process) shares one validator,
// while a different schema gets its own; validation through a shared validator still refuses bad input with
// MHS.SCHEMA.INVALID_INPUT naming the device and capability.
import { describe, expect, test } from 'vitest';
import { ErrorCode } from '../../src/core/index.js';
import { InputSchemaCache, compiledSchemaCount } from '../../src/engine/schema-cache.js';

const schema = () => ({
  type: 'object',
  additionalProperties: false,
  required: ['ticks'],
  properties: { ticks: { type: 'integer', minimum: 1, maximum: 1000 }, note: { type: 'string', format: 'date-time' } },
});
const key = (m: number) => ({
  manifestDigest: String(m).padStart(64, '0'),
  deviceId: 'belt',
  capabilityId: 'cap.step',
});

describe('InputSchemaCache', () => {
  test('identical schemas of 50 endpoints in two caches compile once; another schema once more', () => {
    const before = compiledSchemaCount();
    const engineCache = new InputSchemaCache();
    const gatewayCache = new InputSchemaCache();
    for (let m = 0; m < 50; m++) {
      // A fresh but identical object each time, as each endpoint's manifest parses its own.
      engineCache.validate(key(m), schema(), { ticks: 2 });
      gatewayCache.validate(key(m), schema(), { ticks: 3 });
    }
    expect(engineCache.size).toBe(50);
    expect(compiledSchemaCount() - before).toBe(1);
    engineCache.validate(key(99), { ...schema(), required: [] }, {});
    expect(compiledSchemaCount() - before).toBe(2);
  });

  test('a shared validator still refuses bad input with MHS.SCHEMA.INVALID_INPUT', () => {
    const c = new InputSchemaCache();
    expect(() => c.validate(key(7), schema(), { ticks: 0 })).toThrow(
      expect.objectContaining({
        code: ErrorCode.SCHEMA_INVALID_INPUT,
        details: expect.objectContaining({ device_id: 'belt', capability_id: 'cap.step' }),
      }),
    );
    expect(() => c.validate(key(8), schema(), { ticks: 1, note: 'not a time' })).toThrow(
      expect.objectContaining({ code: ErrorCode.SCHEMA_INVALID_INPUT }),
    );
  });
});
