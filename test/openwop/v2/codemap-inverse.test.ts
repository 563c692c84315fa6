// Guarantees (OpenWOP v2 persistence.md §"The v1 wire of an era-3 log"): the v1 spelling of an era-3 type comes from
// the published codemap row inverted, and only when the codemap is a bijection: the vendored codemap inverts to the
// exact inverse of its rows, and a codemap folding two v1 names onto one v2 name is refused with
// `event_type_unmapped` rather than a guessed spelling.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode, HostError } from '../../../src/core/index.js';
import { invertCodemap, v1TypeOf, v2TypeOf } from '../../../src/openwop/v2/codemap.js';
import { ROOT } from '../../server/serve-helpers.js';

const rows = (
  JSON.parse(readFileSync(join(ROOT, 'vendor/openwop/spec/v2/event-codemap.json'), 'utf8')) as {
    rows: Array<{ v1: string; v2: string }>;
  }
).rows;

describe('the inverted codemap', () => {
  it('maps every v2 name of the vendored codemap back to the v1 name of its row', () => {
    for (const r of rows) {
      expect(v1TypeOf(r.v2)).toBe(r.v1);
      expect(v2TypeOf(v1TypeOf(r.v2))).toBe(r.v2);
    }
    expect(invertCodemap(rows).size).toBe(rows.length);
  });

  it('refuses a codemap that folds two v1 names onto one v2 name', () => {
    const folded = [...rows, { v1: 'run.resumingAgain', v2: rows[0]!.v2 }];
    let err: unknown;
    try {
      invertCodemap(folded);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HostError);
    expect((err as HostError).code).toBe(ErrorCode.EVENT_TYPE_UNMAPPED);
    expect((err as HostError).details).toMatchObject({ type: rows[0]!.v2, v1: [rows[0]!.v1, 'run.resumingAgain'] });
  });

  it('refuses a stored era-3 type that no row and no v2-native type names', () => {
    expect(() => v1TypeOf('run.no-such-type', 4)).toThrow(HostError);
  });
});
