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

/**
 * Credentials written into free text (issue 20): `password=…`, `"api_key": "…"`, a PEM private key, and tokens
 * whose shape names them (AWS access key ids, OpenAI/Anthropic `sk-…`, GitHub `ghp_…`, Slack `xox…-`). The
 * key-shaped ones keep their name, so a reader still sees what was removed.
 */
const FREE_TEXT_ASSIGNMENT =
  /(["']?)\b(password|passwd|pwd|passphrase|secret|client_secret|api[_-]?key|access[_-]?token|auth[_-]?token|token)\1(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s,;&"']+)/gi;
const FREE_TEXT_TOKENS = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bsk-(?:ant-)?[A-Za-z0-9_-]{20,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{30,}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
];

/** A string with the credentials it spells out removed (Bearer/Basic values, assignments, known token shapes). */
export function scrubText(text: string): string {
  let out = text.replace(BEARER_VALUE, (_m, scheme: string) => `${scheme} ${REDACTED}`);
  out = out.replace(
    FREE_TEXT_ASSIGNMENT,
    (_m, q: string, key: string, sep: string) => `${q}${key}${q}${sep}${REDACTED}`,
  );
  for (const re of FREE_TEXT_TOKENS) out = out.replace(re, REDACTED);
  return out;
}

/** True when a key names a credential. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEYS.has(key.toLowerCase().replace(/-/g, '_'));
}

/**
 * Returns a copy of a JSON value with credentials removed: values under secret-named keys become
 * {@link REDACTED}, and strings anywhere lose the credentials they spell out ({@link scrubText}). `skip` holds JSON
 * Pointers of subtrees kept verbatim (a receipt inside its wrapper, HOST-052).
 */
export function scrubSecrets(value: unknown, skip: readonly string[] = [], at = ''): unknown {
  if (skip.includes(at)) return value;
  if (typeof value === 'string') return scrubText(value);
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
