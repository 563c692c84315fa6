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

/**
 * One test that every string any pattern above could change passes (each pattern needs one of these substrings,
 * matched here without case): most strings fail it and skip the seven replacements.
 */
const MAY_HOLD_CREDENTIAL = /bearer|basic|pass|pwd|secret|api|token|-----BEGIN|AKIA|sk-|gh[pousr]_|xox[abprs]-/i;

/** {@link scrubText} without the pre-check: every pattern runs (the reference the pre-check is tested against). */
export function scrubTextFully(text: string): string {
  let out = text.replace(BEARER_VALUE, (_m, scheme: string) => `${scheme} ${REDACTED}`);
  out = out.replace(
    FREE_TEXT_ASSIGNMENT,
    (_m, q: string, key: string, sep: string) => `${q}${key}${q}${sep}${REDACTED}`,
  );
  for (const re of FREE_TEXT_TOKENS) out = out.replace(re, REDACTED);
  return out;
}

/** A string with the credentials it spells out removed (Bearer/Basic values, assignments, known token shapes). */
export function scrubText(text: string): string {
  return MAY_HOLD_CREDENTIAL.test(text) ? scrubTextFully(text) : text;
}

const keyVerdicts = new Map<string, boolean>();

/** True when a key names a credential. */
export function isSecretKey(key: string): boolean {
  let secret = keyVerdicts.get(key);
  if (secret === undefined) {
    secret = SECRET_KEYS.has(key.toLowerCase().replace(/-/g, '_'));
    // Member names repeat from entry to entry; the memo is bounded so arbitrary names cannot grow it.
    if (keyVerdicts.size >= 4096) keyVerdicts.clear();
    keyVerdicts.set(key, secret);
  }
  return secret;
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

/**
 * {@link scrubSecrets} in place, on a JSON copy the caller owns (the ledger's own copy of an append): nothing is
 * copied again, and member names (`skip`) are compared only at the top level, which is all the ledger skips.
 */
export function scrubSecretsInPlace(doc: Record<string, unknown>, skipMembers: readonly string[] = []): void {
  for (const k of Object.keys(doc)) {
    if (skipMembers.includes(k)) continue;
    doc[k] = scrubNode(k, doc[k]);
  }
}

function scrubNode(key: string | null, v: unknown): unknown {
  if (key !== null && v !== null && isSecretKey(key)) return REDACTED;
  if (typeof v === 'string') return scrubText(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = scrubNode(null, v[i]);
  } else if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = scrubNode(k, o[k]);
  }
  return v;
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

/** Parsed pointers by text: an endpoint's redaction paths are parsed once, not on every entry (issue 21). */
const parsedPointers = new Map<string, readonly string[]>();

function parsedPointer(pointer: string): readonly string[] {
  let tokens = parsedPointers.get(pointer);
  if (!tokens) {
    tokens = parsePointer(pointer);
    if (parsedPointers.size >= 4096) parsedPointers.clear();
    parsedPointers.set(pointer, tokens);
  }
  return tokens;
}

/**
 * Replaces the value at each JSON Pointer (an adapter manifest's `redaction.paths`, e.g.
 * `/input/operator_note`) with {@link REDACTED}, in place on `doc` (a JSON copy the caller owns).
 * Missing paths are ignored; a `*` token matches every element or member at that level.
 */
export function redactPaths(doc: unknown, pointers: readonly string[]): void {
  for (const p of pointers) {
    const tokens = parsedPointer(p);
    if (tokens.length) redactAt(doc, tokens, 0);
  }
}

function redactAt(node: unknown, tokens: readonly string[], at: number): void {
  if (!node || typeof node !== 'object') return;
  const head = tokens[at] as string;
  const container = node as Record<string, unknown>;
  const keys = head === '*' ? Object.keys(container) : [head];
  for (const k of keys) {
    if (!Object.prototype.hasOwnProperty.call(container, k)) continue;
    if (at === tokens.length - 1) container[k] = REDACTED;
    else redactAt(container[k], tokens, at + 1);
  }
}
