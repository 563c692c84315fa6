#!/usr/bin/env node
// Writes test/durations.json (each test file's wall time in ms) from a vitest JSON report, for the sequencer
// (test/duration-sequencer.ts). Usage: npx vitest run --reporter=json --outputFile=report.json
//   then: npm run test:durations -- report.json
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const [report] = process.argv.slice(2);
if (!report) {
  process.stderr.write('usage: npm run test:durations -- <vitest-json-report>\n');
  process.exit(2);
}
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = {};
for (const r of JSON.parse(readFileSync(report, 'utf8')).testResults) {
  const ms = Math.round(r.endTime - r.startTime);
  // The report may come from another checkout: the key is the path from its `test/` folder on.
  const at = r.name.indexOf('/test/');
  if (Number.isFinite(ms) && at >= 0) out[r.name.slice(at + 1)] = ms;
}
const sorted = Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync(join(root, 'test/durations.json'), JSON.stringify(sorted, null, 2) + '\n');
process.stdout.write(`test/durations.json: ${Object.keys(sorted).length} files\n`);
