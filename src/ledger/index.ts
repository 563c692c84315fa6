// Anything added here is API.
export type { Db } from './db.js';
export { storeCall } from './db.js';
export {
  openDb,
  resolveDbLocation,
  isPostgresLocation,
  sqliteSynchronousFromEnv,
  sqliteBusyMsFromEnv,
  SQLITE_BUSY_ENV_VAR,
  DEFAULT_DB_PATH,
  DB_ENV_VAR,
  SQLITE_SYNC_ENV_VAR,
} from './open-db.js';
export type { OpenDbOptions } from './open-db.js';
export { SqliteDb } from './sqlite-db.js';
export type { SqliteDbOptions } from './sqlite-db.js';
export { PostgresDb, redactUrl } from './postgres-db.js';
export type { PgListener, PostgresDbOptions } from './postgres-db.js';
export { migrate, appliedMigrations } from './migrate.js';
export type { MigrationDdl } from './migrate.js';
export { appendOnlyDdl, isAppendOnlyViolation, withDeleteAllowed, APPEND_ONLY_MARK } from './append-only.js';
export { LEDGER_KINDS } from './ledger-types.js';
export type {
  Ledger,
  DurableLedger,
  AppendOptions,
  LedgerAppend,
  LedgerEntry,
  LedgerKind,
  LedgerStatus,
} from './ledger-types.js';
export { gateEffect, settlesCommand } from './gate-projection.js';
export type { GateEffect, DurableGateReason } from './gate-projection.js';
export { GATE_OWNER, gateHeldError, ownerAlive } from './device-gates.js';
export type { DurableGate } from './device-gates.js';
export { HostLease, ownerStatus } from './host-leases.js';
export type { LeaseTiming } from './host-leases.js';
export { openLedger } from './sql-ledger.js';
export type { LedgerOptions } from './sql-ledger.js';
export { isStoreFailure, ledgerUnavailable } from './ledger-health.js';
export { asStoreOutage } from './store-outage.js';
export { scrubSecrets, redactPaths, isSecretKey, REDACTED } from './redaction.js';
export { ChainWalker } from './chain-walker.js';
export type { ChainBreak, BreakReason } from './chain-walker.js';
export { receiptEntry } from './receipt-entry.js';
export { labelLedger } from './labelled-ledger.js';
export type { ReplayLabel } from './labelled-ledger.js';
export type { ReceiptEntryExtra } from './receipt-entry.js';
export { openArtifacts, checkManifestDigest } from './artifacts.js';
export type { Artifacts, TranscriptItem, StoredTranscriptItem } from './artifacts.js';
export { needsCheckpoint, pruneLedger, retentionCheckpoint, unrecordedPrune } from './prune.js';
export type { PruneResult } from './prune.js';
export { exportPackage } from './export-package.js';
export type { ExportOptions, ExportResult } from './export-package.js';
export { verifyPackage } from './verify-package.js';
export { checkEndpointChain, endpointChainBreak } from './package-checks.js';
export type { EndpointChainCheck } from './package-checks.js';
export type { PackageVerification, VerifyOptions } from './verify-package.js';
export type { PackageCoverage } from './package-coverage.js';
export { endpointSlug, NOT_PROVEN, PACKAGE_FORMAT } from './package-format.js';
export type { PackageManifest, PackageBreak, PackageDeviation } from './package-format.js';
export { ANCHOR_FORMAT, checkAnchor, makeAnchor, parseAnchor } from './ledger-anchor.js';
export type { AnchorSignature, LedgerAnchor } from './ledger-anchor.js';
export { bindingDigest, transcriptForm, transcriptItemDigest } from './transcript-binding.js';
