// Guarantee (issue 17: "vendor any schema you validate against, byte for byte"): every file under
// vendor/openwop/schemas/v2/ is listed in that folder's SHA256SUMS with the digest of its bytes and has a provenance row
// in vendor/openwop/README.md naming its source repository, path and commit; every `$ref` the v2 schemas make to
// another file resolves to a vendored file, so nothing the v2 validators read is missing or transcribed.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../server/serve-helpers.js';

const DIR = join(ROOT, 'vendor/openwop/schemas/v2');
const V2_ID_BASE = 'https://openwop.dev/spec/v2/';
const files = readdirSync(DIR).filter((f) => f.endsWith('.schema.json'));
const sums = new Map(
  readFileSync(join(DIR, 'SHA256SUMS'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(/\s+/))
    .map(([digest, name]) => [name!, digest!]),
);
const readme = readFileSync(join(ROOT, 'vendor/openwop/README.md'), 'utf8');

function refsOf(v: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(v)) v.forEach((x) => refsOf(x, out));
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref' && typeof x === 'string' && !x.startsWith('#'))
        // A relative ref, or an absolute one under the v2 `$id` base (run-event-payloads names three so).
        out.add(x.split('#')[0]!.replace(/^\.\//, '').replace(V2_ID_BASE, ''));
      else refsOf(x, out);
    }
  return out;
}

describe('vendored OpenWOP v2 schemas', () => {
  it('every file has its recorded SHA-256 and a provenance row, and SHA256SUMS lists no other file', () => {
    expect(files.length).toBeGreaterThan(5);
    for (const f of files) {
      const digest = createHash('sha256')
        .update(readFileSync(join(DIR, f)))
        .digest('hex');
      expect(sums.get(f), f).toBe(digest);
      expect(readme, f).toMatch(new RegExp(`\\| \`schemas/v2/${f.replace(/\./g, '\\.')}\` \\| openwop/[\\w-]+ \\| `));
    }
    expect([...sums.keys()].sort()).toEqual([...files].sort());
  });

  it('every cross-file $ref resolves to a vendored file', () => {
    const missing: string[] = [];
    for (const f of files)
      for (const ref of refsOf(JSON.parse(readFileSync(join(DIR, f), 'utf8')), new Set()))
        if (!files.includes(ref)) missing.push(`${f} → ${ref}`);
    expect(missing).toEqual([]);
  });
});
