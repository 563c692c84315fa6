import { v1TypeOf, v2TypeOf } from './v2/codemap.js';

/**
 * The era key `eventLogSchemaVersion` (v2 persistence.md §"The era key"): absent on a run reads as 2 (v1 era, never
 * backfilled); a host serving major 2 stamps 3 on every run it creates, whichever major or path creates it.
 */
export const ERA_V1 = 2;
export const ERA_V2 = 3;

/** The era a run's stored key means: the stamp, or 2 when it has none. */
export function eraOf(stamp: number | null): number {
  return stamp ?? ERA_V1;
}

/**
 * The type an append stores (persistence.md §"The writer rule"): the engine's v1 name as it is in an era-2 log, its
 * v2 name through the codemap in an era-3 log.
 */
export function storedType(stamp: number | null, engineType: string, sequence: number): string {
  return eraOf(stamp) === ERA_V2 ? v2TypeOf(engineType, sequence) : engineType;
}

/**
 * The engine's (v1) name of a stored type, at the storage boundary every reader passes: an era-3 row through the
 * inverted codemap row (§"The v1 wire of an era-3 log"), an era-2 row as stored.
 */
export function engineTypeOf(stamp: number | null, stored: string, sequence: number): string {
  return eraOf(stamp) === ERA_V2 ? v1TypeOf(stored, sequence) : stored;
}
