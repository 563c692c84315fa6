// Guarantees: every vendored OpenWOP v1 schema loads and compiles (the host compiles each on first use, so a broken
// vendored set must be caught here rather than by the first request that needs the broken schema), and a schema
// that does not compile is reported by `compileAll` with the schema named.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadOpenwopSchemas, openwopDir, openwopSchemas, schemaId } from '../../src/openwop/schemas.js';

describe('vendored OpenWOP schemas', () => {
  it('every schema of vendor/openwop compiles', () => {
    const schemas = openwopSchemas();
    expect(schemas.ids).toContain(schemaId('workflow-definition'));
    expect(() => schemas.compileAll()).not.toThrow();
  });

  it('a schema with a dangling $ref fails compileAll, naming it', () => {
    const copy = mkdtempSync(join(tmpdir(), 'mhs-vendored-'));
    cpSync(openwopDir(), copy, { recursive: true });
    const file = join(copy, 'schemas', 'workflow-definition.schema.json');
    const schema = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    schema.properties = {
      ...(schema.properties as object),
      broken: { $ref: 'https://openwop.dev/spec/v1/nowhere.json' },
    };
    writeFileSync(file, JSON.stringify(schema));
    expect(() => loadOpenwopSchemas(copy).compileAll()).toThrow(/nowhere/);
  });
});
