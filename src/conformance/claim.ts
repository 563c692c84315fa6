/**
 * The registry claim document of this host (HOST-083; MHS-007 §4.4 as far as it is public). MHS-007 itself is not
 * public: the document carries the one public shape of a claim, the `conformance` object of an MHS descriptor
 * (wire contract §2: `level`, `trust`, `report_ref`, `report_digest`), for a host instead of an endpoint, plus what
 * the report it points at says: its test basis (self-test or endpoint-tested, HOST-002) and the levels it does not
 * support with what blocks them. The level claimed is the report's `highest_satisfied_level`, never more. Pure.
 */
import { H } from '../core/index.js';
import type { ConformanceReport } from './report.js';

/** Format tag of the document (our choice: MHS-007 names none publicly). */
export const CLAIM_FORMAT = 'mhs-host-conformance-claim/0.1';

export interface ClaimDocument {
  format: typeof CLAIM_FORMAT;
  subject: { kind: 'host'; name: string; version: string };
  profile: 'MHS-009';
  /** The descriptor's `conformance` shape; `level` null when no level holds. */
  conformance: {
    level: `CL${number}` | null;
    /** `self`: declared by the host's own test run; only a registry's verification makes it `verified`. */
    trust: 'self';
    report_ref: string;
    /** `H(report)`: SHA-256 of the report's JCS form (wire contract §1). */
    report_digest: string;
  };
  test_basis: ConformanceReport['test_basis']['kind'];
  /** Endpoints the suite ran against, with their own reports (endpoint-tested only). */
  endpoints: ConformanceReport['test_basis']['endpoints'];
  statement: string;
  not_claimed: Array<{ level: `CL${number}`; blocking: string[] }>;
  report_generated_at: string;
  not_proven: string[];
}

/** The claim for `report`, published at `reportRef`. */
export function buildClaim(report: ConformanceReport, reportRef: string): ClaimDocument {
  return {
    format: CLAIM_FORMAT,
    subject: { kind: 'host', name: report.host.name, version: report.host.version },
    profile: 'MHS-009',
    conformance: {
      level: report.highest_satisfied_level === null ? null : `CL${report.highest_satisfied_level}`,
      trust: 'self',
      report_ref: reportRef,
      report_digest: H(report),
    },
    test_basis: report.test_basis.kind,
    endpoints: report.test_basis.kind === 'endpoint-tested' ? report.test_basis.endpoints : [],
    statement: `${report.statement} Test basis: ${report.test_basis.kind}.`,
    not_claimed: report.levels
      .filter((l) => !l.satisfied)
      .map((l) => ({ level: `CL${l.level}` as const, blocking: l.blocking })),
    report_generated_at: report.generated_at,
    not_proven: report.not_proven,
  };
}
