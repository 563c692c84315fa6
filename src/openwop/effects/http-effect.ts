/**
 * One outbound HTTP POST as a Layer-2 effect (v2 idempotency.md §"Layer 2: effect identity"; seam `http.remote-run`),
 * retried at the transport layer under one identity: the provider receives the effect's key as `Idempotency-Key` on
 * every attempt, and each attempt is its own ledger row (claimed before it is sent) of the same effect. A transport
 * failure (no HTTP answer: refused, reset, cut) may have reached the provider, so the attempt is left claimed and the
 * next one takes it over (the guard's `retry`: the key makes a second delivery a duplicate the provider drops).
 */
import { NodeFailure } from '../node-registry.js';
import type { EffectGuard } from './effect-guard.js';

/** Attempts one effect may make before its transport failure fails the node. */
export const TRANSPORT_ATTEMPTS = 2;

/**
 * How long one attempt may wait for the provider's whole answer (headers and body) before it is given up as a
 * transport failure: a provider that accepts the request and never answers would otherwise hold the node forever.
 */
export const ATTEMPT_TIMEOUT_MS = 30_000;

/** The POST to send. */
export interface HttpEffect {
  /** The call's name within its node execution (stable across re-executions). */
  name: string;
  url: URL;
  /** Headers besides `content-type` and `idempotency-key`. */
  headers: Record<string, string>;
  body: unknown;
  /** The effect's identity at the provider, sent as `Idempotency-Key` (never a credential). */
  providerKey: string;
  /** What is asked, for the guard's request digest (no credential). */
  request: unknown;
  signal?: AbortSignal;
  /** Per attempt (default {@link ATTEMPT_TIMEOUT_MS}). */
  timeoutMs?: number;
}

/** What the provider answered (kept as the effect's outcome). */
export interface HttpAnswer {
  status: number;
  json: Record<string, unknown>;
  traceresponse: string | null;
}

/**
 * True for an attempt that got no (whole) HTTP answer: refused, reset, cut, or past its timeout; never one its
 * caller aborted. Such an attempt may have reached the provider.
 */
function isTransportFailure(err: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted === true) return false;
  return err instanceof TypeError || (err instanceof Error && err.name === 'TimeoutError');
}

/**
 * Sends `e` through `guard` (directly when the host installs none), retrying a transport failure up to
 * {@link TRANSPORT_ATTEMPTS} attempts in all. Resolves to the provider's answer, whatever its status.
 * @throws NodeFailure the guard's refusal; else the last transport error.
 */
export async function postHttpEffect(guard: EffectGuard | undefined, e: HttpEffect): Promise<HttpAnswer> {
  const send = async (): Promise<HttpAnswer> => {
    const timeout = AbortSignal.timeout(e.timeoutMs ?? ATTEMPT_TIMEOUT_MS);
    const r = await fetch(e.url, {
      method: 'POST',
      headers: { ...e.headers, 'content-type': 'application/json', 'idempotency-key': e.providerKey },
      body: JSON.stringify(e.body),
      signal: e.signal ? AbortSignal.any([e.signal, timeout]) : timeout,
    });
    const json = (await r.json().catch(() => ({}))) as Record<string, unknown>;
    return { status: r.status, json, traceresponse: r.headers.get('traceresponse') };
  };
  for (let attempt = 1; ; attempt++) {
    try {
      if (!guard) return await send();
      return await guard.perform(
        {
          seam: 'http.remote-run',
          name: e.name,
          request: e.request,
          idempotent: true,
          providerKey: e.providerKey,
          failed: () => 'unknown',
        },
        send,
      );
    } catch (err) {
      if (err instanceof NodeFailure || attempt >= TRANSPORT_ATTEMPTS || !isTransportFailure(err, e.signal)) throw err;
    }
  }
}
