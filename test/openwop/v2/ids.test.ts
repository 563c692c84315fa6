// Guarantees the v2 id rules this host applies (OpenWOP v2 identity.md §5, ids.schema.json $comment, RFC 0184 §A.1):
// the path projection escapes every byte outside [A-Za-z0-9._-] as ~HH (`/` → ~2F, `:` → ~3A, `~` → ~7E) and
// inverts exactly; a `~` without two hex digits is validation_error; a bound runId matches the vendored grammar and
// resolves back to the engine id, as does the bare form; another tenant is id_tenant_mismatch.
import { describe, expect, it } from 'vitest';
import {
  V2_TENANT,
  bindRunId,
  projectPathSegment,
  runIdFromParam,
  runPathSegment,
  unprojectPathSegment,
} from '../../../src/openwop/v2/index.js';
import { v2Problems } from './v2-kit.js';

const ENGINE_RUN = 'run_01ARZ3NDEKTSV4RRFFQ69G5FAV';

describe('v2 id projection', () => {
  it('escapes the bytes the $comment names and leaves [A-Za-z0-9._-] verbatim', () => {
    expect(projectPathSegment('acme/r-9f3c')).toBe('acme~2Fr-9f3c');
    expect(projectPathSegment('anon:x')).toBe('anon~3Ax');
    expect(projectPathSegment('a~b')).toBe('a~7Eb');
    expect(projectPathSegment('Az09._-')).toBe('Az09._-');
    expect(projectPathSegment('é')).toBe('~C3~A9');
  });

  it('inverts the projection, and refuses a ~ without two hex digits', () => {
    for (const id of ['acme/r-9f3c', 'anon:t/x~y', 'é/ü', bindRunId(ENGINE_RUN)])
      expect(unprojectPathSegment(projectPathSegment(id))).toBe(id);
    for (const bad of ['a~', 'a~2', 'a~ZZb'])
      expect(() => unprojectPathSegment(bad)).toThrow(expect.objectContaining({ code: 'validation_error' }));
  });

  it('a bound run id matches the v2 runId grammar and every accepted form resolves to the engine id', () => {
    const bound = bindRunId(ENGINE_RUN);
    expect(v2Problems('ids#/$defs/runId', bound)).toEqual([]);
    expect(bound.startsWith(`${V2_TENANT}/`)).toBe(true);
    for (const param of [runPathSegment(ENGINE_RUN), bound, ENGINE_RUN, bound.split('/')[1]!])
      expect(runIdFromParam(param)).toBe(ENGINE_RUN);
    expect(() => runIdFromParam(`other~2F${bound.split('/')[1]}`)).toThrow(
      expect.objectContaining({ code: 'id_tenant_mismatch' }),
    );
  });
});
