import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCode, HostError } from '../../core/index.js';
import { v2NativeTypes } from '../native-events.js';
import { openwopDir } from '../schemas.js';

export interface CodemapRow {
  v1: string;
  v2: string;
  payloadDef: string;
}

let byV1: Map<string, CodemapRow> | undefined;
let byV2: Map<string, string> | undefined;
let native: ReadonlySet<string> | undefined;

function rows(): Map<string, CodemapRow> {
  if (!byV1) {
    // The published mapping (vendor/openwop/spec/v2/event-codemap.json); a host MUST NOT carry a private one.
    const doc = JSON.parse(readFileSync(join(openwopDir(), 'spec/v2/event-codemap.json'), 'utf8')) as {
      rows: CodemapRow[];
    };
    byV1 = new Map(doc.rows.map((r) => [r.v1, r]));
  }
  return byV1;
}

/** The v2-native types of the vendored data (native-events.ts). */
function nativeTypes(): ReadonlySet<string> {
  native ??= v2NativeTypes(openwopDir());
  return native;
}

/** True when `type` is a v2 protocol type name (a `v2` column of the codemap, or a v2-native type). */
export function isV2Type(type: string): boolean {
  for (const r of rows().values()) if (r.v2 === type) return true;
  return nativeTypes().has(type);
}

/**
 * The v2 type of an event the engine wrote (an era-2, v1-named log), through spec/v2/event-codemap.json. A v2-native
 * type (registered in v2 and named by no codemap row, e.g. `negotiation.decided`; native-events.ts) is its own v2
 * name. This host has no registered vendor org, so any other type the codemap does not name fails the read with
 * `event_type_unmapped` (v2 events.md §Era-2 logs).
 */
export function v2TypeOf(v1Type: string, sequence?: number): string {
  const row = rows().get(v1Type);
  if (row) return row.v2;
  if (nativeTypes().has(v1Type)) return v1Type;
  throw new HostError(ErrorCode.EVENT_TYPE_UNMAPPED, `event type ${v1Type} has no v2 name`, {
    type: v1Type,
    ...(sequence !== undefined ? { sequence } : {}),
  });
}

/**
 * The v1 spelling of a type an era-3 log stores (persistence.md §"The v1 wire of an era-3 log"): the same codemap row,
 * inverted; a v2-native type is its own name. The inverse is built once and only from a codemap that is a bijection
 * (checked, not assumed); a row folding two v1 names onto one v2 name, or a stored type no row and no native type
 * names, fails the read with `event_type_unmapped` rather than guess a spelling.
 */
export function v1TypeOf(v2Type: string, sequence?: number): string {
  byV2 ??= invertCodemap([...rows().values()]);
  const v1 = byV2.get(v2Type);
  if (v1 !== undefined) return v1;
  if (nativeTypes().has(v2Type)) return v2Type;
  throw new HostError(ErrorCode.EVENT_TYPE_UNMAPPED, `stored era-3 event type ${v2Type} has no v1 name`, {
    type: v2Type,
    ...(sequence !== undefined ? { sequence } : {}),
  });
}

/**
 * The v2 → v1 map of codemap rows, only when it is a function (persistence.md: verified, not assumed); a v2 name two
 * rows share is `event_type_unmapped`, naming both v1 names.
 */
export function invertCodemap(codemap: readonly Pick<CodemapRow, 'v1' | 'v2'>[]): Map<string, string> {
  const inv = new Map<string, string>();
  for (const r of codemap) {
    const prior = inv.get(r.v2);
    if (prior !== undefined && prior !== r.v1) {
      throw new HostError(ErrorCode.EVENT_TYPE_UNMAPPED, `the codemap maps both ${prior} and ${r.v1} onto ${r.v2}`, {
        type: r.v2,
        v1: [prior, r.v1],
      });
    }
    inv.set(r.v2, r.v1);
  }
  return inv;
}
