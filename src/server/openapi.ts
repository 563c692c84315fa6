import { schemaId } from '../openwop/schemas.js';
import { REQUEST_SCHEMAS } from './request-schemas.js';

const ref = (name: string): Record<string, string> => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Record<string, unknown>): Record<string, unknown> => ({ 'application/json': { schema } });
const errors = {
  '400': { description: 'validation_error', content: json(ref('Error')) },
  '401': { description: 'unauthorized', content: json(ref('Error')) },
  '404': { description: 'not_found', content: json(ref('Error')) },
};
const runId = { name: 'runId', in: 'path', required: true, schema: { type: 'string' } };

// The conformance test seams (host-sample-test-seams.md), described only when they are served.
const testSeamPaths = {
  '/v1/host/sample/replay/effect-count': {
    get: {
      summary: 'Effects the conformance effect seam counted for a run (host-sample-test-seams.md §20)',
      parameters: [{ name: 'runId', in: 'query', required: true, schema: { type: 'string' } }],
      responses: { '200': { description: '{runId, effectCount}' }, ...errors },
    },
  },
  '/v1/host/sample/test/mock-ai/program': {
    post: {
      summary:
        'Program the conformance mock provider: answers per nodeId, consumed in order (host-sample-test-seams.md §5)',
      requestBody: { required: true, content: json({ type: 'object', required: ['nodeId', 'program'] }) },
      responses: { '200': { description: '{nodeId, entries}' }, ...errors },
    },
  },
  '/v1/host/sample/test/llm-cache-key': {
    post: {
      summary: 'The LLM cache key of an LLMCacheKeyInput (host-sample-test-seams.md §4; RFC 0041 §A, RFC 0150 §C)',
      requestBody: {
        required: true,
        content: json({ type: 'object', required: ['provider', 'model', 'messages'] }),
      },
      responses: { '200': { description: '{cacheKey}' }, ...errors },
    },
  },
  '/v1/host/sample/test/runs/{runId}/events': {
    get: {
      summary: "A run's stored event log, filtered (conformance event-log seam)",
      parameters: [
        runId,
        ...['type', 'nodeId', 'causationId', 'correlationId'].map((name) => ({
          name,
          in: 'query',
          required: false,
          schema: { type: 'string' },
        })),
      ],
      responses: { '200': { description: '{events}' }, ...errors },
    },
  },
  '/v1/host/sample/test/runs/{runId}/variables': {
    post: {
      summary:
        'Set declared variables of a live run as variable.changed events (RFC 0022 §B HVMAP-2 mid-run mutation fixture)',
      parameters: [runId],
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['variables'],
          properties: { variables: { type: 'object', minProperties: 1 } },
          additionalProperties: false,
        }),
      },
      responses: {
        '200': { description: "{runId, variables}: the run's variables after the write" },
        ...errors,
        '409': { description: 'conflict: the run is terminal or ending', content: json(ref('Error')) },
      },
    },
  },
  '/v1/host/sample/test/capability-toggle': {
    post: {
      summary:
        'Set ({name, value}), remove ({name, value: null}) or clear ({reset: true}) a capability overlay entry (RFC 0022 §C refusal cases)',
      requestBody: { required: true, content: json({ type: 'object' }) },
      responses: { '200': { description: '{overlay, set} or {overlay, reset}' }, ...errors },
    },
  },
  '/v1/host/sample/workflows': {
    post: {
      summary:
        'Register a workflow at run time ({workflowId, nodes[{nodeId, typeId, config}], edges?} or a full definition); mappings need their capability (RFC 0022 §C)',
      requestBody: { required: true, content: json({ type: 'object' }) },
      responses: { '201': { description: '{workflowId, version}' }, ...errors },
    },
  },
};

// Served with the test seams only where the host claims the aiEnvelope family.
const envelopeSeamPaths = {
  '/v1/host/sample/envelope/accept': {
    post: {
      summary: 'The EnvelopeOutcome of a candidate AI envelope (RFC 0021 §A; ai-envelope.md §Primitive)',
      requestBody: { required: true, content: json({ type: 'object', required: ['envelope'] }) },
      responses: { '200': { description: 'EnvelopeOutcome {status: accepted | gated | invalid, ...}' }, ...errors },
    },
  },
};

/**
 * The OpenAPI 3.1 description of the OpenWOP REST surface served at `/v1/openapi.json`. Response
 * bodies reference the shared OpenWOP schemas by their `$id`. The test seam paths are listed only with
 * `testSeams` (the app serves them only then), the envelope/accept seam only with `envelopeSeam` too.
 */
export function openApiDocument(opts: { testSeams?: boolean; envelopeSeam?: boolean } = {}): Record<string, unknown> {
  const doc = {
    openapi: '3.1.0',
    info: { title: 'mhs-host OpenWOP REST API', version: '1' },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        ...REQUEST_SCHEMAS,
        Error: {
          type: 'object',
          required: ['error', 'message'],
          properties: { error: { type: 'string' }, message: { type: 'string' }, details: { type: 'object' } },
        },
        RunSnapshot: { $ref: schemaId('run-snapshot') },
        RunEvent: { $ref: schemaId('run-event') },
        WorkflowDefinition: { $ref: schemaId('workflow-definition') },
        Capabilities: { $ref: schemaId('capabilities') },
      },
    },
    security: [{ bearer: [] }],
    paths: {
      '/.well-known/openwop': {
        get: {
          summary: 'Capabilities document',
          security: [],
          responses: { '200': { description: 'ok', content: json(ref('Capabilities')) } },
        },
      },
      '/v1/openapi.json': {
        get: { summary: 'This document', security: [], responses: { '200': { description: 'ok' } } },
      },
      '/v1/workflows': {
        get: { summary: 'List registered workflows', responses: { '200': { description: 'ok' }, ...errors } },
        post: {
          summary: 'Register a workflow definition',
          requestBody: { required: true, content: json(ref('WorkflowDefinition')) },
          responses: { '201': { description: 'registered' }, ...errors },
        },
      },
      '/v1/workflows/{workflowId}': {
        get: {
          summary: 'A registered definition',
          parameters: [{ name: 'workflowId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'ok', content: json(ref('WorkflowDefinition')) }, ...errors },
        },
      },
      '/v1/runs': {
        get: {
          summary: 'List runs, newest first (summaries; page with nextCursor)',
          parameters: [
            { name: 'status', in: 'query', required: false, schema: { type: 'string' } },
            { name: 'workflowId', in: 'query', required: false, schema: { type: 'string' } },
            { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 200 } },
            { name: 'cursor', in: 'query', required: false, schema: { type: 'string' } },
          ],
          responses: { '200': { description: 'ok' }, ...errors },
        },
        post: {
          summary: 'Start a run',
          parameters: [
            { name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } },
            // RFC 0040 §B: a run started from another host continues that host's trace.
            { name: 'traceparent', in: 'header', required: false, schema: { type: 'string' } },
          ],
          requestBody: { required: true, content: json(ref('CreateRunRequest')) },
          responses: {
            '201': { description: 'created', content: json(ref('RunSnapshot')) },
            '200': { description: 'replayed by Idempotency-Key', content: json(ref('RunSnapshot')) },
            '409': { description: 'conflict (key reused with another body)', content: json(ref('Error')) },
            '422': { description: 'conversation_roster_exceeded (RFC 0239 §C)', content: json(ref('Error')) },
            ...errors,
          },
        },
      },
      '/v1/runs/{runId}': {
        get: {
          summary: 'Run snapshot',
          parameters: [runId],
          responses: { '200': { description: 'ok', content: json(ref('RunSnapshot')) }, ...errors },
        },
      },
      '/v1/runs/{runId}/ancestry': {
        get: {
          operationId: 'getRunAncestry',
          summary: "The run's immediate parent, on this host or another (RFC 0040 §C); 404 unless advertised",
          parameters: [runId],
          responses: {
            '200': {
              description: 'ok',
              content: json({
                type: 'object',
                required: ['runId', 'hostId', 'parent'],
                properties: {
                  runId: { type: 'string' },
                  hostId: { type: 'string' },
                  parent: {
                    oneOf: [
                      { type: 'null' },
                      {
                        type: 'object',
                        required: ['runId', 'hostId', 'cause'],
                        properties: {
                          runId: { type: 'string' },
                          hostId: { type: 'string' },
                          cause: { enum: ['mcp-tool-call', 'a2a-message', 'core.subWorkflow', 'core.dispatch'] },
                          wellKnownUrl: { type: 'string', format: 'uri' },
                        },
                      },
                    ],
                  },
                },
              }),
            },
            ...errors,
          },
        },
      },
      '/v1/runs/{runId}/events': {
        get: {
          summary: 'Run events (JSON, or SSE with Accept: text/event-stream and Last-Event-ID)',
          parameters: [runId, { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' } }],
          responses: {
            '200': {
              description: 'ok',
              content: {
                ...json({ type: 'object', properties: { events: { type: 'array', items: ref('RunEvent') } } }),
                'text/event-stream': { schema: { type: 'string' } },
              },
            },
            ...errors,
          },
        },
      },
      '/v1/runs/{runId}/events/poll': {
        get: {
          summary: 'Long-poll for events after a sequence',
          parameters: [
            runId,
            { name: 'lastSequence', in: 'query', schema: { type: 'integer', minimum: 0 } },
            { name: 'afterSequence', in: 'query', schema: { type: 'integer' } },
            {
              name: 'timeout',
              in: 'query',
              description: 'seconds (0-60) with lastSequence; milliseconds with afterSequence',
              schema: { type: 'integer', minimum: 0 },
            },
          ],
          responses: { '200': { description: '{events, isComplete, lastSequence, timedOut}' }, ...errors },
        },
      },
      '/v1/runs/{runId}/cancel': {
        post: {
          summary: 'Cancel a run',
          parameters: [runId],
          requestBody: { required: false, content: json(ref('CancelRunRequest')) },
          responses: {
            '200': { description: 'cancelled, or already over (unchanged)', content: json(ref('RunSnapshot')) },
            '202': { description: 'cancelling (work in flight settles first)', content: json(ref('RunSnapshot')) },
            ...errors,
          },
        },
      },
      '/v1/runs/{runId}/interrupts/{nodeId}': {
        post: {
          summary: 'Resolve the interrupt pending at a node',
          parameters: [
            runId,
            { name: 'nodeId', in: 'path', required: true, schema: { type: 'string' } },
            {
              name: 'interruptId',
              in: 'query',
              required: false,
              description:
                'Host extension: which of several interrupts open at the node at once (pendingInterrupts[].interruptId); required then',
              schema: { type: 'string', minLength: 1, maxLength: 512 },
            },
          ],
          requestBody: { required: true, content: json(ref('ResolveInterruptRequest')) },
          responses: {
            '200': { description: 'resolved', content: json(ref('RunSnapshot')) },
            '410': { description: 'interrupt_gone: its run ended with it open', content: json(ref('Error')) },
            '422': { description: 'conversation_speaker_not_participant (RFC 0239 §B)', content: json(ref('Error')) },
            ...errors,
          },
        },
      },
      '/v1/runs/{runId}:fork': {
        post: {
          summary: 'Fork a run: replay (side effects resolved from the source) or branch (replay.md, RFC 0140)',
          parameters: [
            runId,
            { name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } },
          ],
          requestBody: { required: true, content: json(ref('ForkRunRequest')) },
          responses: {
            '201': { description: 'fork started' },
            '200': { description: 'replayed by Idempotency-Key' },
            '422': { description: 'fork_point_invalid: fromSeq past the source log', content: json(ref('Error')) },
            ...errors,
          },
        },
      },
    },
  };
  if (!opts.testSeams) return doc;
  return { ...doc, paths: { ...doc.paths, ...testSeamPaths, ...(opts.envelopeSeam ? envelopeSeamPaths : {}) } };
}
