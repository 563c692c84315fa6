import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

/** Where `npm run test:durations` keeps each test file's wall time (ms) from a full run. */
const DURATIONS = new URL('./durations.json', import.meta.url);
/** A file not in the table yet (new) is placed as if it took this long. */
const UNKNOWN_MS = 2_000;

/**
 * Longest files first, by the wall times of an earlier full run: a fresh clone has no vitest cache, and the default
 * order (largest source first) started the two-minute approval wait and the multi-process tests last, so the run
 * ended on one busy worker. Ties keep the default order.
 */
export class DurationSequencer extends BaseSequencer {
  private readonly known: Record<string, number> = existsSync(DURATIONS)
    ? (JSON.parse(readFileSync(DURATIONS, 'utf8')) as Record<string, number>)
    : {};

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const cost = (f: TestSpecification) =>
      this.known[relative(this.ctx.config.root, f.moduleId).split('\\').join('/')] ?? UNKNOWN_MS;
    return base
      .map((f, i) => ({ f, i, ms: cost(f) }))
      .sort((a, b) => b.ms - a.ms || a.i - b.i)
      .map((x) => x.f);
  }
}
