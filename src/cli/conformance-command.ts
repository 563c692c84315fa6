import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Command, Option } from 'commander';
import { ErrorCode, HostError, RealClock, isoAt } from '../core/index.js';
import { buildConformanceReport, reportMarkdown } from '../conformance/report.js';
import type { EndpointReportRef } from '../conformance/report.js';
import { parseVitestReport } from '../conformance/test-results.js';
import { badFlag } from './cli-runtime.js';

const ENDPOINT_REPORT = {
  type: 'object',
  required: ['endpoint_id', 'level', 'report'],
  additionalProperties: false,
  properties: {
    endpoint_id: { type: 'string', minLength: 1 },
    level: { type: 'integer', minimum: 1, maximum: 5 },
    report: { type: 'string', minLength: 1 },
  },
} as const;
const validEndpointReport = new Ajv2020({ allErrors: true }).compile(ENDPOINT_REPORT);

function readText(flag: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw badFlag(flag, `cannot read ${path}: ${(err as Error).message}`, { path });
  }
}

function endpointReport(path: string): EndpointReportRef {
  let doc: unknown;
  try {
    doc = JSON.parse(readText('--endpoint-report', path));
  } catch (err) {
    if (err instanceof HostError) throw err;
    throw badFlag('--endpoint-report', `${path} is not JSON`, { path });
  }
  if (!validEndpointReport(doc))
    throw new HostError(
      ErrorCode.HOST_CONFIG_INVALID,
      `--endpoint-report ${path} is not an endpoint report reference`,
      {
        path,
        errors: validEndpointReport.errors,
      },
    );
  return doc as EndpointReportRef;
}

/**
 * `mhs-host conformance-report`: the MHS-009 host conformance report (HOST-001, 002) from a vitest JSON run, written
 * as JSON and Markdown. Labelled a self-test unless an endpoint report at CL3+ is given.
 */
export function conformanceCommand(): Command {
  return new Command('conformance-report')
    .description('Build the MHS-009 host conformance report from a vitest JSON run (npm run conformance)')
    .addOption(new Option('--results <file>', 'vitest JSON report (vitest run --reporter=json)').makeOptionMandatory())
    .addOption(
      new Option(
        '--endpoint-report <file...>',
        'JSON {endpoint_id, level, report} of an endpoint the suite was run against (HOST-002)',
      ),
    )
    .option('--out <dir>', 'write host-conformance.json and host-conformance.md there', 'reports')
    .addOption(
      new Option('--require-level <n>', 'exit 1 unless this level is satisfied').argParser((v) => {
        if (!/^[1-5]$/.test(v)) throw badFlag('--require-level', 'expected a level 1 to 5', { value: v });
        return Number(v);
      }),
    )
    .action((opts: { results: string; endpointReport?: string[]; out: string; requireLevel?: number }) => {
      const tests = parseVitestReport(readText('--results', opts.results), resolve('.'));
      const endpointReports = (opts.endpointReport ?? []).map(endpointReport);
      const report = buildConformanceReport({
        tests,
        host: { name: 'mhs-host', version: '0.1.0' },
        generatedAt: isoAt(new RealClock().now()),
        endpointReports,
      });
      mkdirSync(opts.out, { recursive: true });
      writeFileSync(join(opts.out, 'host-conformance.json'), `${JSON.stringify(report, null, 2)}\n`);
      writeFileSync(join(opts.out, 'host-conformance.md'), reportMarkdown(report));
      const s = report.summary;
      process.stdout.write(
        `${report.test_basis.kind}: ${s.pass} pass, ${s.fail} fail, ${s.not_tested} not tested, ${s.gap} gap, ` +
          `${s.not_applicable} not applicable, ${s.not_testable} not testable (of ${s.requirements}; ${s.tests} tests)\n` +
          `highest level satisfied: ${report.highest_satisfied_level ? `CL${report.highest_satisfied_level}` : 'none'}\n`,
      );
      for (const l of report.levels)
        if (!l.satisfied) process.stdout.write(`  CL${l.level} blocked by ${l.blocking.join(', ')}\n`);
      process.stdout.write(`written to ${join(opts.out, 'host-conformance.{json,md}')}\n`);
      if (opts.requireLevel && (report.highest_satisfied_level ?? 0) < opts.requireLevel) process.exitCode = 1;
    });
}
