/** What replaces a redacted or scrubbed value (HOST-056). */
export const REDACTED = '[REDACTED]';

/** Keys whose values are credentials wherever they appear (compared lower-case, `-` read as `_`). */
const SECRET_KEYS = new Set([
  'authorization',
  'proxy_authorization',
  'cookie',
  'set_cookie',
  'password',
  'passwd',
  'passphrase',
  'secret',
  'client_secret',
  'api_key',
  'apikey',
  'x_api_key',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'bearer',
  'bearer_token',
  'auth_token',
  'session_token',
  'credential',
  'credentials',
  'private_key',
]);

const BEARER_VALUE = /\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi;

/** True when a key names a credential. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEYS.has(key.toLowerCase().replace(/-/g, '_'));
}

/**
 * Returns a copy of a JSON value with credentials removed: values under secret-named keys become
 * {@link REDACTED}, and `Bearer …`/`Basic …` strings anywhere lose their token. `skip` holds JSON
 * Pointers of subtrees kept verbatim (a receipt inside its wrapper, HOST-052).
 */
export function scrubSecrets(value: unknown, skip: readonly string[] = [], at = ''): unknown {
  if (skip.includes(at)) return value;
  if (typeof value === 'string') return value.replace(BEARER_VALUE, (_m, scheme: string) => `${scheme} ${REDACTED}`);
  if (Array.isArray(value)) return value.map((v, i) => scrubSecrets(v, skip, `${at}/${i}`));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = isSecretKey(k) && v !== null ? REDACTED : scrubSecrets(v, skip, `${at}/${escapePointer(k)}`);
    }
    return out;
  }
  return value;
}

function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Splits an RFC 6901 JSON Pointer into unescaped tokens; `""` is the whole document. */
export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new TypeError(`not a JSON Pointer: ${pointer}`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * Replaces the value at each JSON Pointer (an adapter manifest's `redaction.paths`, e.g.
 * `/input/operator_note`) with {@link REDACTED}, in place on `doc` (a JSON copy the caller owns).
 * Missing paths are ignored; a `*` token matches every element or member at that level.
 */
export function redactPaths(doc: unknown, pointers: readonly string[]): void {
  for (const p of pointers) {
    const tokens = parsePointer(p);
    if (tokens.length) redactAt(doc, tokens);
  }
}

function redactAt(node: unknown, tokens: string[]): void {
  if (!node || typeof node !== 'object') return;
  const [head, ...rest] = tokens as [string, ...string[]];
  const container = node as Record<string, unknown>;
  const keys = head === '*' ? Object.keys(container) : [head];
  for (const k of keys) {
    if (!Object.prototype.hasOwnProperty.call(container, k)) continue;
    if (rest.length === 0) container[k] = REDACTED;
    else redactAt(container[k], rest);
  }
}
