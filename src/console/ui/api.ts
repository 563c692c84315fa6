// The operator API client of the console: bearer auth, JSON bodies, the error envelope as ApiError.

/** A refused call: HTTP status and the envelope's `error` code. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

let token = '';

/** The bearer token every call carries. */
export function setToken(t: string): void {
  token = t;
}

export function getToken(): string {
  return token;
}

/** Calls `/v1/operator${path}`; a non-2xx answer rejects with {@link ApiError}. */
export function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  return request<T>(`/v1/operator${path}`, method, body);
}

/** Calls the OpenWOP run API, `/v1${path}` (the same token: client and operator tokens may use it). */
export function runApi<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  return request<T>(`/v1${path}`, method, body);
}

async function request<T>(url: string, method: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const data = (res.status === 204 ? null : await res.json().catch(() => null)) as {
    message?: string;
    error?: string;
    details?: unknown;
  } | null;
  if (!res.ok) throw new ApiError(data?.message ?? res.statusText, res.status, data?.error, data?.details);
  return data as T;
}

/** The code (or HTTP status) of a refusal, for the status line. */
export function refusal(e: unknown): string {
  if (e instanceof ApiError) return e.code ?? String(e.status);
  return (e as { code?: string }).code ?? 'error';
}
