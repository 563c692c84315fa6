import { readFileSync } from 'node:fs';
import { ErrorCode, HostError } from '../../core/index.js';
import type { ServiceFamily } from '../service-family.js';
import { remoteRunNode } from './remote-run-node.js';
import type { Peer, RemoteRunDeps } from './remote-run-node.js';

/**
 * Reads a peers file: JSON `{"<name>": {"url": "http://host:port", "token": "<bearer>"}}`.
 * @throws HostError `MHS.HOST.CONFIG_INVALID` for an unreadable or malformed file.
 */
export function loadPeers(file: string): Record<string, Peer> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `cannot read peers file ${file}`, { file }, { cause: err });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new HostError(ErrorCode.HOST_CONFIG_INVALID, 'the peers file must hold an object', { file });
  const out: Record<string, Peer> = {};
  for (const [name, p] of Object.entries(raw as Record<string, unknown>)) {
    const o = p as { url?: unknown; token?: unknown } | null;
    let ok = typeof o?.url === 'string' && typeof o.token === 'string' && o.token.length > 0;
    if (ok) {
      try {
        ok = ['http:', 'https:'].includes(new URL(o!.url as string).protocol);
      } catch {
        ok = false;
      }
    }
    if (!ok)
      throw new HostError(ErrorCode.HOST_CONFIG_INVALID, `peer ${name} needs an http(s) url and a token`, {
        file,
        peer: name,
      });
    out[name] = { url: o!.url as string, token: o!.token as string };
  }
  return out;
}

/**
 * Cross-host causation (RFC 0040, multiAgent.executionModel version 3): advertises `version: 3` with
 * `crossHostCausation {supported, hostId, ancestryEndpointSupported}` and registers `mhs.remoteRun`, which starts a
 * linked run on a peer host. Install it after the agents family (its version wins the merge). The inbound half
 * (the `POST /v1/runs` causation link and `traceparent`, `causationHostId` on `run.started`, the ancestry endpoint)
 * is the host's own, keyed by the same host id.
 */
export function causationFamily(d: RemoteRunDeps): ServiceFamily {
  return {
    name: 'causation',
    capabilities: () => ({
      multiAgent: {
        executionModel: {
          version: 3,
          crossHostCausation: { supported: true, hostId: d.hostId, ancestryEndpointSupported: true },
        },
      },
    }),
    nodes: [remoteRunNode(d)],
  };
}
