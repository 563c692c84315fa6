/**
 * Credentials at rest (issue 20 item 4): an endpoint's inline bearer token is sealed with the host secret key
 * (AES-256-GCM, `node:crypto`) before it is written to the store, so the store's bytes (a backup, a copied file,
 * a PostgreSQL dump) never hold it. The key is `MHS_HOST_SECRET_KEY` (32 bytes, base64 or hex) or a key file:
 * `MHS_HOST_SECRET_KEY_FILE`, else `secret.key` beside a SQLite store, else `./.mhs-host/secret.key`. The file is
 * created (mode 0600) the first time a credential is sealed.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ErrorCode, HostError } from '../core/index.js';

const PREFIX = 'aes-256-gcm:v1:';

/** Seals and opens short secrets with the host key. */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string, context?: Record<string, unknown>): string;
  /** Whether a stored value is sealed by a box (as opposed to a legacy plain value). */
  isSealed(value: string): boolean;
}

/** Where the key comes from for a store at `location` (a SQLite path, `:memory:`, or a postgres URL). */
export function secretKeySource(
  location: string,
  env: Record<string, string | undefined> = process.env,
): { kind: 'env' } | { kind: 'file'; path: string } | { kind: 'ephemeral' } {
  if (env['MHS_HOST_SECRET_KEY']) return { kind: 'env' };
  if (env['MHS_HOST_SECRET_KEY_FILE']) return { kind: 'file', path: resolve(env['MHS_HOST_SECRET_KEY_FILE']) };
  if (location === ':memory:') return { kind: 'ephemeral' };
  if (/^postgres(ql)?:/.test(location)) return { kind: 'file', path: resolve('.mhs-host', 'secret.key') };
  return { kind: 'file', path: join(dirname(resolve(location)), 'secret.key') };
}

function keyInvalid(message: string, source: string, remediation: string): HostError {
  return new HostError(ErrorCode.HOST_SECRET_KEY_INVALID, message, { key_source: source }, { remediation });
}

function decodeKey(text: string, source: string): Buffer {
  const t = text.trim();
  const key = /^[0-9a-f]{64}$/i.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64');
  if (key.length !== 32)
    throw keyInvalid(
      `the host secret key from ${source} is not 32 bytes`,
      source,
      'Give 32 random bytes as base64 or hex, e.g. `openssl rand -base64 32`.',
    );
  return key;
}

/** Opens the host's secret box for a store at `location`; the key is read (or created) only when first needed. */
export function openSecretBox(location: string, env: Record<string, string | undefined> = process.env): SecretBox {
  const source = secretKeySource(location, env);
  const name = source.kind === 'file' ? source.path : source.kind === 'env' ? 'MHS_HOST_SECRET_KEY' : 'memory';
  let key: Buffer | undefined;
  const load = (create: boolean): Buffer => {
    if (key) return key;
    if (source.kind === 'env') return (key = decodeKey(env['MHS_HOST_SECRET_KEY'] as string, name));
    if (source.kind === 'ephemeral') return (key = randomBytes(32));
    try {
      return (key = decodeKey(readFileSync(source.path, 'utf8'), name));
    } catch (err) {
      if (err instanceof HostError) throw err;
      if ((err as { code?: string }).code !== 'ENOENT' || !create)
        throw keyInvalid(
          `the host secret key ${name} cannot be read: ${(err as Error).message}`,
          name,
          'Restore the secret.key this store was used with, or set MHS_HOST_SECRET_KEY / MHS_HOST_SECRET_KEY_FILE; without it, re-enter the endpoint credentials.',
        );
      const fresh = randomBytes(32);
      mkdirSync(dirname(source.path), { recursive: true });
      writeFileSync(source.path, `${fresh.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
      return (key = fresh);
    }
  };
  return {
    isSealed: (v) => v.startsWith(PREFIX),
    seal(plain) {
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', load(true), iv);
      const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
      return `${PREFIX}${iv.toString('base64')}:${c.getAuthTag().toString('base64')}:${body.toString('base64')}`;
    },
    open(sealed, context = {}) {
      const [iv, tag, body] = sealed.slice(PREFIX.length).split(':');
      try {
        const d = createDecipheriv('aes-256-gcm', load(false), Buffer.from(iv ?? '', 'base64'));
        d.setAuthTag(Buffer.from(tag ?? '', 'base64'));
        return Buffer.concat([d.update(Buffer.from(body ?? '', 'base64')), d.final()]).toString('utf8');
      } catch (err) {
        if (err instanceof HostError) throw err;
        throw new HostError(
          ErrorCode.HOST_SECRET_KEY_INVALID,
          `a stored credential does not open with the host secret key ${name}`,
          { key_source: name, ...context },
          {
            remediation:
              'Use the secret.key (or MHS_HOST_SECRET_KEY) this store was written with, or re-enter the endpoint credentials.',
          },
        );
      }
    },
  };
}
