import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { ErrorCode, HostError } from '../../core/index.js';
import type { OpenwopHost } from '../../openwop/host.js';
import { MCP_INVOKE_WORKFLOW } from '../../openwop/nodes/conformance-mcp-invoke-node.js';
import type { McpInvokeOutcome } from '../../openwop/nodes/conformance-mcp-invoke-node.js';
import { bindRunId } from '../../openwop/v2/index.js';
import { callerOf } from '../auth.js';
import { V2_SEAMS } from '../seam-mount.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => void;

/** The MCP revision-negotiation driver (host-sample-test-seams.md §23) at its seams-profile address. */
export const MCP_INVOKE_SEAM_PATH = `${V2_SEAMS.prefix}/mcp/invoke`;

// §23's request `{serverUrl, requestVersion?: "<YYYY-MM-DD>"}`, closed: the additive MRTR and extension-opacity fields
// (`tool`, `clientCapabilities`, `elicitationAnswer`, `scenario`) drive behaviour this host does not have.
const BODY = {
  type: 'object',
  additionalProperties: false,
  required: ['serverUrl'],
  properties: {
    serverUrl: { type: 'string', format: 'uri', pattern: '^https?://' },
    requestVersion: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
  },
} as const;

let validate: ValidateFunction | undefined;

function parse(body: unknown): { serverUrl: string; requestVersion?: string } {
  if (!validate) {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats(ajv);
    validate = ajv.compile(BODY);
  }
  if (!validate(body)) {
    const errors = (validate.errors ?? []).map((e) => ({ path: e.instancePath || '/', message: e.message ?? '' }));
    throw new HostError(
      ErrorCode.VALIDATION_ERROR,
      'the mcp/invoke body is not valid (host-sample-test-seams.md §23)',
      {
        errors,
      },
    );
  }
  return body as { serverUrl: string; requestVersion?: string };
}

/**
 * `POST /conformance/seams/sample/mcp/invoke` `{serverUrl, requestVersion?}`: runs the MCP invoke fixture
 * ({@link MCP_INVOKE_WORKFLOW}) to its end: the host's `ctx.mcp` client calls `tools/list` on `serverUrl` once, and the
 * negotiation is recorded on that run's log (`negotiation.decided`). `200 {negotiatedVersion, runId}`; a revision the
 * host refuses (a `requestVersion` off its ladder, or a server landing outside it) is `400 interop_version_unsupported`
 * with `details {protocol: "mcp", requested, supported, reason, retriable: false, runId}`; any other failure of the
 * exchange is the node's error with `details.runId`. Mounted with the seams profile where the `mcp` family is installed.
 */
export function registerV2McpInvokeSeam(app: FastifyInstance, host: OpenwopHost): void {
  app.post(MCP_INVOKE_SEAM_PATH, async (req) => {
    const caller = callerOf(req);
    const body = parse(req.body);
    const { run } = await host.runs.createRun({ workflowId: MCP_INVOKE_WORKFLOW, inputs: { ...body } }, caller);
    await host.runs.waitTerminal(run.runId);
    const done = (await host.store.getRun(run.runId))!;
    const runId = bindRunId(run.runId);
    const outcome = done.variables.outcome as McpInvokeOutcome | undefined;
    if (outcome && 'negotiatedVersion' in outcome) return { negotiatedVersion: outcome.negotiatedVersion, runId };
    if (outcome && 'refused' in outcome)
      throw new HostError(
        ErrorCode.INTEROP_VERSION_UNSUPPORTED,
        `the MCP negotiation with the named server was refused (${outcome.refused.reason}); see negotiation.decided on run ${runId}`,
        { protocol: 'mcp', ...outcome.refused, retriable: false, runId },
      );
    const err = done.error;
    throw new HostError(
      (err?.code ?? ErrorCode.INTERNAL) as ErrorCode,
      err?.message ?? `the MCP exchange ended ${done.status}`,
      {
        runId,
        ...(err?.details !== undefined ? { cause: err.details } : {}),
      },
    );
  });
}
