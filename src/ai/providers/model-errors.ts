/**
 * One mapping from a provider SDK's failure to a `HostError` with a registered code (issue 15). Both official SDKs
 * (openai, @anthropic-ai/sdk) throw the same family of classes (`APIError` with `status`, `APIUserAbortError`,
 * `APIConnectionError`, `APIConnectionTimeoutError`); each provider passes its SDK's classes in. The SDK has
 * already retried 429/5xx (honouring `retry-after`) when an error reaches this mapping. The API key never
 * appears in a message or in details: provider text is scrubbed of it, and no SDK error is kept as `cause`.
 */
import { ErrorCode, HostError } from '../../core/index.js';

type Ctor = abstract new (...args: never[]) => Error;

/** The error classes of one SDK. */
export interface SdkErrorClasses {
  /** The SDK's root class (`OpenAIError`, `AnthropicError`). */
  SdkError: Ctor;
  APIError: Ctor;
  APIUserAbortError: Ctor;
  APIConnectionError: Ctor;
  APIConnectionTimeoutError: Ctor;
}

/** Who was called, for details and scrubbing. */
export interface ModelCallContext {
  provider: string;
  model: string;
  /** Removed from every text that is kept. */
  apiKey?: string;
}

/** Fields both SDKs' `APIError` carry (openai: `code`, `type`; anthropic: `type`, `errorCode`). */
interface ApiErrorFields {
  status?: number;
  headers?: { get(name: string): string | null };
  type?: string | null;
  code?: string | null;
  errorCode?: string | null;
  requestID?: string | null;
  apiMessage?: string | null;
  message: string;
}

/** `text` with every occurrence of the key replaced. */
export function scrubKey(text: string, apiKey: string | undefined): string {
  return apiKey && apiKey.length >= 4 ? text.split(apiKey).join('[redacted]') : text;
}

const CONTEXT_RE = /context[_ ]length|context window|prompt is too long|too many tokens|maximum context/i;

function apiError(e: ApiErrorFields, ctx: ModelCallContext): HostError {
  const status = e.status ?? 0;
  const type = e.type ?? undefined;
  const code = e.code ?? e.errorCode ?? undefined;
  const said = scrubKey(e.apiMessage ?? e.message, ctx.apiKey);
  const details = {
    provider: ctx.provider,
    model: ctx.model,
    status,
    ...(type ? { type } : {}),
    ...(code ? { code } : {}),
    ...(e.requestID ? { request_id: e.requestID } : {}),
  };
  const make = (c: ErrorCode, what: string, remediation: string, extra = {}, retryable = false) =>
    new HostError(
      c,
      `${ctx.provider} ${ctx.model}: ${what} (${status}): ${said}`,
      { ...details, ...extra },
      {
        remediation,
        retryable,
      },
    );
  if (status === 401 || status === 403)
    return make(
      ErrorCode.HOST_MODEL_AUTH,
      status === 401 ? 'API key refused' : 'permission denied',
      `Check the API key in ${ctx.provider === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY'} and that it may use this model.`,
    );
  if (status === 429) {
    const quota = code === 'insufficient_quota' || type === 'insufficient_quota';
    const after = e.headers?.get('retry-after');
    return make(
      ErrorCode.HOST_MODEL_QUOTA,
      quota ? 'quota exhausted' : 'rate limited',
      quota
        ? "Add credit or raise the account's quota, then run again."
        : 'The SDK retried with backoff and still was refused; wait, lower the request rate, or raise --model-retries.',
      { reason: quota ? 'insufficient_quota' : 'rate_limited', ...(after ? { retry_after_s: Number(after) } : {}) },
      !quota,
    );
  }
  if (status === 413 || code === 'context_length_exceeded' || (status === 400 && CONTEXT_RE.test(said)))
    return make(
      ErrorCode.HOST_MODEL_CONTEXT_TOO_LONG,
      'context too long',
      'Use a model with a larger context window, fewer endpoints, or a lower --max-turns.',
    );
  if (status === 404)
    return make(
      ErrorCode.HOST_MODEL_CONFIG,
      'model or endpoint not found',
      'Check the model id and the base URL (it must end where the API paths start, e.g. .../v1).',
    );
  if (status >= 500)
    return make(
      ErrorCode.HOST_MODEL_UNAVAILABLE,
      'provider error',
      'The provider failed after the SDK retried; try again later or another model.',
      { reason: 'server' },
      true,
    );
  return make(
    ErrorCode.HOST_MODEL_REQUEST_REJECTED,
    'request rejected',
    'The provider refused the request; check that the model supports tool calling.',
  );
}

/**
 * Maps anything an SDK call threw to a `HostError`: abort → `MHS.HOST.MODEL_ABORTED`; timeout or connection →
 * `MHS.HOST.MODEL_UNAVAILABLE`; HTTP status → AUTH (401/403), QUOTA (429), CONTEXT_TOO_LONG, CONFIG (404),
 * UNAVAILABLE (5xx), REQUEST_REJECTED (other 4xx); another SDK error (a malformed stream) →
 * `MHS.HOST.MODEL_RESPONSE_INVALID`. A `HostError` passes through; anything else is `MHS.HOST.INTERNAL`.
 */
export function modelError(err: unknown, sdk: SdkErrorClasses, ctx: ModelCallContext): HostError {
  if (err instanceof HostError) return err;
  const base = { provider: ctx.provider, model: ctx.model };
  const text = scrubKey(err instanceof Error ? err.message : String(err), ctx.apiKey);
  if (err instanceof sdk.APIUserAbortError)
    return new HostError(ErrorCode.HOST_MODEL_ABORTED, `${ctx.provider} ${ctx.model}: call cancelled`, base, {
      remediation: 'The run was cancelled; nothing more was asked of the model.',
    });
  if (err instanceof sdk.APIConnectionTimeoutError || err instanceof sdk.APIConnectionError) {
    const timeout = err instanceof sdk.APIConnectionTimeoutError;
    return new HostError(
      ErrorCode.HOST_MODEL_UNAVAILABLE,
      `${ctx.provider} ${ctx.model}: ${timeout ? 'request timed out' : 'cannot connect'}: ${text}`,
      { ...base, reason: timeout ? 'timeout' : 'connection' },
      {
        remediation: timeout
          ? 'Raise --model-timeout, or check that the server is not overloaded.'
          : 'Check the base URL and that the server is running and reachable.',
        retryable: true,
      },
    );
  }
  if (err instanceof sdk.APIError) return apiError(err as unknown as ApiErrorFields, ctx);
  if (err instanceof sdk.SdkError)
    return new HostError(
      ErrorCode.HOST_MODEL_RESPONSE_INVALID,
      `${ctx.provider} ${ctx.model}: unusable answer: ${text}`,
      { ...base, reason: 'malformed' },
      {
        remediation:
          'The server does not speak the API as the SDK expects; try --no-stream, a newer server, or another one.',
      },
    );
  return new HostError(ErrorCode.HOST_INTERNAL, `${ctx.provider} ${ctx.model}: ${text}`, base);
}
