import { ErrorCode, RETRYABLE_CODES, isErrorCode } from './error-codes.js';

/** The wire shape of an MHS error (wire contract §8). */
export interface MhsWireError {
  mhs_code: string;
  message: string;
  remediation: string;
  details?: Record<string, unknown>;
}

/**
 * The one error type of mhs-host: a stable `code`, a message a person can act on,
 * a `remediation` and structured `details`.
 */
export class HostError extends Error {
  override readonly name = 'HostError';
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  readonly remediation: string;
  readonly retryable: boolean;

  constructor(
    code: ErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    opts: { remediation?: string; retryable?: boolean; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.details = details;
    this.remediation = opts.remediation ?? '';
    this.retryable = opts.retryable ?? RETRYABLE_CODES.has(code);
  }

  /** The MHS wire form, for tool results and receipts. */
  toWire(): MhsWireError {
    const w: MhsWireError = { mhs_code: this.code, message: this.message, remediation: this.remediation };
    if (Object.keys(this.details).length) w.details = this.details;
    return w;
  }

  /** The OpenWOP REST error envelope `{error, message, details?}`. */
  toEnvelope(): { error: string; message: string; details?: Record<string, unknown> } {
    return Object.keys(this.details).length
      ? { error: this.code, message: this.message, details: this.details }
      : { error: this.code, message: this.message };
  }

  /** Rebuilds an error received over the wire; unknown codes keep their text in details. */
  static fromWire(w: MhsWireError): HostError {
    const code = isErrorCode(w.mhs_code) ? w.mhs_code : ErrorCode.HOST_INTERNAL;
    const details = isErrorCode(w.mhs_code) ? (w.details ?? {}) : { ...w.details, wire_code: w.mhs_code };
    return new HostError(code, w.message, details, { remediation: w.remediation });
  }
}

/** Normalises anything thrown at a boundary; a catch-all maps to an internal code, never a caller-fault code. */
export function toHostError(err: unknown, fallback: ErrorCode = ErrorCode.HOST_INTERNAL): HostError {
  if (err instanceof HostError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new HostError(fallback, message, {}, { cause: err });
}
