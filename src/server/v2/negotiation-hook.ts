import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode, HostError } from '../../core/index.js';
import type { OpenwopHost } from '../../openwop/host.js';
import { VERSION_OF, classifyPath, negotiate, toV2Error, v2DiscoveryRoot } from '../../openwop/v2/index.js';
import type { Major } from '../../openwop/v2/index.js';
import type { ServedRoute } from './route-table.js';
import { V2_SEAM_SPACE, v1SeamPath } from '../seam-mount.js';

/** The response and request header of major negotiation (v2 versioning.md §1.3, §1.4). */
export const VERSION_HEADER = 'openwop-version';

/** The major a request was negotiated to (set by the negotiation hook on every request). */
export function majorOf(req: FastifyRequest): Major {
  return (req as FastifyRequest & { openwopMajor?: Major }).openwopMajor ?? 1;
}

// Routes on /v1 that are no protocol operation (v2 versioning.md §1.4): no OpenWOP-Version on them.
const NOT_PROTOCOL = ['/v1/operator', '/v1/host/'];

function headerValue(req: FastifyRequest): string | undefined {
  const h = req.headers[VERSION_HEADER];
  return Array.isArray(h) ? h.join(',') : h;
}

/** If-None-Match against a strong ETag (RFC 9110 §13.1.2: weak comparison for GET). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/** Sends `doc` with a strong ETag over its bytes, or `304` when `If-None-Match` names it (capabilities.md §1.1). */
export function sendWithEtag(req: FastifyRequest, reply: FastifyReply, doc: unknown): FastifyReply {
  const bytes = JSON.stringify(doc);
  const etag = `"${createHash('sha256').update(bytes).digest('base64url')}"`;
  void reply.header('etag', etag);
  const inm = req.headers['if-none-match'];
  if (matches(Array.isArray(inm) ? inm.join(',') : inm, etag)) return reply.status(304).send();
  return reply.type('application/json').send(bytes);
}

/** The v2 operation ids the mounted routes serve (a family whose record names a surface is advertised only with it). */
function servedOperations(routes: readonly ServedRoute[]): ReadonlySet<string> {
  return new Set(routes.flatMap((r) => (r.operationId ? [r.operationId] : [])));
}

function refuse(reply: FastifyReply, err: HostError): FastifyReply {
  const { status, body } = toV2Error(err);
  return reply.status(status).type('application/json').send(body);
}

/**
 * Negotiates the major of every request by `OpenWOP-Version` (v2 versioning.md §1.3) before authentication: `/v1/…`
 * with a value other than 1 → `400 protocol_version_mismatch`; an unversioned path or the discovery document naming
 * a major not served → `406 protocol_version_unsupported`; no header → the preferred major (1, through the overlap).
 * Every protocol response names its contract in `OpenWOP-Version` (§1.4). Under major 2 the discovery document is the
 * closed v2 root (capabilities.md §1), with ETag and `304`; the unversioned run paths under major 1 answer `400`, as
 * v1 answers for unversioned roots.
 */
export function registerNegotiation(
  app: FastifyInstance,
  host: OpenwopHost,
  served: readonly Major[] = [1, 2],
  routes: readonly ServedRoute[] = [],
  o: { seams?: boolean; records?: () => Record<string, Record<string, unknown>> } = {},
): void {
  app.decorateRequest('openwopMajor', undefined);
  app.addHook('onRequest', async (req, reply) => {
    const path = req.url.split('?')[0] ?? '';
    const seam = path.startsWith(V2_SEAM_SPACE);
    // The seams profile is a major-2 surface while it is mounted; otherwise its paths are unknown routes.
    if (seam && !o.seams) return;
    const kind = seam ? 'unversioned' : classifyPath(path);
    if (kind === 'other') return;
    const n = negotiate(kind, headerValue(req), served);
    (req as FastifyRequest & { openwopMajor?: Major }).openwopMajor = n.major;
    if (kind !== 'v1' || !NOT_PROTOCOL.some((p) => path.startsWith(p)))
      void reply.header(VERSION_HEADER, VERSION_OF[n.major]);
    // One resource, two representations: caches key on the request header (capabilities.md §1).
    if (kind === 'discovery') void reply.header('vary', 'OpenWOP-Version');
    if ('refuse' in n) return refuse(reply, n.refuse);
    if (kind === 'discovery' && n.major === 2 && (req.method === 'GET' || req.method === 'HEAD'))
      return sendWithEtag(
        req,
        reply,
        v2DiscoveryRoot(host.capabilities(), servedOperations(routes), {
          seamsProfile: o.seams === true,
          ...(o.records ? { records: o.records() } : {}),
        }),
      );
    if (kind === 'unversioned' && n.major === 1)
      return refuse(
        reply,
        new HostError(
          ErrorCode.VALIDATION_ERROR,
          'unversioned paths are the major-2 surface: send OpenWOP-Version: 2',
          {
            path,
            v1Path: seam ? v1SeamPath(path) : `/v1${path}`,
          },
        ),
      );
  });
}
