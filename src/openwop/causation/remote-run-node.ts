import { postHttpEffect } from '../effects/http-effect.js';
import type { HttpAnswer } from '../effects/http-effect.js';
import { NodeFailure } from '../node-registry.js';
import type { NodeContext, NodeModule } from '../node-registry.js';

/** A peer host this host may start runs on: its base URL and a bearer token for it. */
export interface Peer {
  url: string;
  token: string;
}

/** What the remote-run node needs from its host. */
export interface RemoteRunDeps {
  hostId: string;
  peers: Readonly<Record<string, Peer>>;
  /** This host's discovery document URL (sent as `wellKnownUrl`); undefined until the server listens. */
  wellKnownUrl: () => string | undefined;
  /** How long one attempt waits for the peer's answer (default: effects/http-effect.ts `ATTEMPT_TIMEOUT_MS`). */
  attemptTimeoutMs?: number;
}

const REQUESTED = 'cross-host run requested';

/** The `log.appended` event that records the request (the causation event on this host), reused on a resume. */
async function causeEvent(ctx: NodeContext, peer: string, workflowId: string): Promise<string> {
  const prior = ctx.history.find((e) => e.type === 'log.appended' && e.payload.message === REQUESTED);
  if (prior) return prior.eventId;
  const [e] = await ctx.emit([
    { type: 'log.appended', payload: { level: 'info', message: REQUESTED, fields: { peer, workflowId } } },
  ]);
  return e!.eventId;
}

/**
 * `mhs.remoteRun` (config `{peer, workflowId, inputs?}`): starts `workflowId` on the peer host with
 * `POST /v1/runs`, linking it to this run (RFC 0040): `metadata.causation {parentRunId, parentNodeId, eventId,
 * hostId, wellKnownUrl, cause: core.subWorkflow}` and the node span's W3C `traceparent` header, so the peer's run
 * carries `causationHostId` and continues this trace. Idempotent per activation (`Idempotency-Key`); a transport
 * failure is retried once under the same key (effects/http-effect.ts). Does not wait
 * for the remote run. Outputs `{remoteRunId, remoteStatus, traceparent, remoteTraceparent}`.
 */
export function remoteRunNode(d: RemoteRunDeps): NodeModule {
  return {
    typeId: 'mhs.remoteRun',
    validate(node) {
      const c = node.config;
      const out: Array<{ path: string; message: string }> = [];
      if (typeof c.peer !== 'string' || !c.peer) out.push({ path: '/config/peer', message: 'a peer name is required' });
      if (typeof c.workflowId !== 'string' || !c.workflowId)
        out.push({ path: '/config/workflowId', message: 'a workflowId is required' });
      if (c.inputs !== undefined && (typeof c.inputs !== 'object' || c.inputs === null || Array.isArray(c.inputs)))
        out.push({ path: '/config/inputs', message: 'inputs must be an object' });
      return out;
    },
    async execute(ctx) {
      const name = String(ctx.node.config.peer);
      const workflowId = String(ctx.node.config.workflowId);
      const peer = d.peers[name];
      if (!peer) throw new NodeFailure('validation_error', `no peer host named ${name}`, { peer: name });
      const eventId = await causeEvent(ctx, name, workflowId);
      const wellKnownUrl = d.wellKnownUrl();
      const body = {
        workflowId,
        inputs: { ...((ctx.node.config.inputs as Record<string, unknown> | undefined) ?? {}), ...ctx.inputs },
        metadata: {
          causation: {
            parentRunId: ctx.runId,
            parentNodeId: ctx.node.id,
            eventId,
            hostId: d.hostId,
            ...(wellKnownUrl ? { wellKnownUrl } : {}),
            cause: 'core.subWorkflow',
          },
        },
      };
      const key = `${d.hostId}:${ctx.runId}:${ctx.node.id}:${ctx.activation}`;
      let res: HttpAnswer;
      try {
        // A Layer-2 effect (seam http.remote-run): the peer dedupes on the Idempotency-Key, a deterministic derivative
        // of the effect's activity recipe, so a dead or cut attempt is sent again under the same key (idempotency.md).
        res = await postHttpEffect(ctx.effects, {
          name: `${name}:${workflowId}`,
          url: new URL('/v1/runs', peer.url),
          headers: {
            authorization: `Bearer ${peer.token}`,
            ...(ctx.traceparent ? { traceparent: ctx.traceparent } : {}),
          },
          body,
          providerKey: key,
          request: { peer: name, body },
          signal: ctx.signal,
          ...(d.attemptTimeoutMs !== undefined ? { timeoutMs: d.attemptTimeoutMs } : {}),
        });
      } catch (err) {
        if (err instanceof NodeFailure) throw err; // the effect guard's refusal
        throw new NodeFailure('external_call_failed', `peer ${name} could not be reached`, {
          peer: name,
          cause: err instanceof Error ? err.message : String(err),
        });
      }
      const json = res.json;
      if (res.status !== 201 && res.status !== 200)
        throw new NodeFailure('external_call_failed', `peer ${name} refused the run (${res.status})`, {
          peer: name,
          status: res.status,
          error: json.error ?? null,
        });
      return {
        outputs: {
          remoteRunId: json.runId,
          remoteStatus: json.status,
          ...(ctx.traceparent ? { traceparent: ctx.traceparent } : {}),
          // The peer run's own span context (W3C `traceresponse`): in this trace when the peer honoured it.
          ...(res.traceresponse ? { remoteTraceparent: res.traceresponse } : {}),
        },
      };
    },
  };
}
