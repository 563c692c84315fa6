/**
 * The one registry of stable error codes. `MHS.*` codes come from the wire contract §8
 * (`shared/spec/mhs-wire.md`); lower-case codes are OpenWOP host codes used on the REST surface.
 * Tests assert on these codes, never on message text.
 */
export const ErrorCode = {
  /** Post-send timeout or lost reply: the physical outcome is not known. data: command_id. */
  OUTCOME_UNKNOWN: 'MHS.OUTCOME.UNKNOWN',
  LIMIT_RANGE: 'MHS.LIMIT.RANGE',
  /** Rate limit, also a full host command lane (HOST-082). */
  LIMIT_RATE: 'MHS.LIMIT.RATE',
  LIMIT_DURATION: 'MHS.LIMIT.DURATION',
  LIMIT_FRAME: 'MHS.LIMIT.FRAME',
  SAFETY_NOT_CERTIFIED: 'MHS.SAFETY.NOT_CERTIFIED',
  SAFETY_ESTOP_ACTIVE: 'MHS.SAFETY.ESTOP_ACTIVE',
  SAFETY_HARDWARE_ESTOP_ONLY: 'MHS.SAFETY.HARDWARE_ESTOP_ONLY',
  SAFETY_INTERLOCK_OPEN: 'MHS.SAFETY.INTERLOCK_OPEN',
  SAFETY_INTERLOCK_UNKNOWN: 'MHS.SAFETY.INTERLOCK_UNKNOWN',
  TRANSPORT_TIMEOUT_PRESEND: 'MHS.TRANSPORT.TIMEOUT_PRESEND',
  TRANSPORT_TIMEOUT_POSTSEND: 'MHS.TRANSPORT.TIMEOUT_POSTSEND',
  /** A dead child process or closed socket. data: endpoint_id. */
  TRANSPORT_DISCONNECTED: 'MHS.TRANSPORT.DISCONNECTED',
  /** A reply over the frame limit (4 MiB), refused rather than truncated (HOST-063). */
  TRANSPORT_FRAME_TOO_LARGE: 'MHS.TRANSPORT.FRAME_TOO_LARGE',
  AUTH_DISABLED: 'MHS.AUTH.DISABLED',
  AUTH_HARDWARE_DISABLED: 'MHS.AUTH.HARDWARE_DISABLED',
  AUTH_PERMIT_REQUIRED: 'MHS.AUTH.PERMIT_REQUIRED',
  AUTH_PERMIT_DIGEST_MISMATCH: 'MHS.AUTH.PERMIT_DIGEST_MISMATCH',
  AUTH_PERMIT_CONSUMED: 'MHS.AUTH.PERMIT_CONSUMED',
  AUTH_PERMIT_REVOKED: 'MHS.AUTH.PERMIT_REVOKED',
  AUTH_PERMIT_EXPIRED: 'MHS.AUTH.PERMIT_EXPIRED',
  AUTH_ENDPOINT_UNTRUSTED: 'MHS.AUTH.ENDPOINT_UNTRUSTED',
  SESSION_EXPIRED: 'MHS.SESSION.EXPIRED',
  SESSION_SCOPE: 'MHS.SESSION.SCOPE',
  SESSION_UNKNOWN: 'MHS.SESSION.UNKNOWN',
  STATE_STALE_REVISION: 'MHS.STATE.STALE_REVISION',
  /** Arguments that fail the binding's schema, unknown device or capability. data: errors. */
  SCHEMA_INVALID_INPUT: 'MHS.SCHEMA.INVALID_INPUT',
  IDEMPOTENCY_CONFLICT: 'MHS.IDEMPOTENCY.CONFLICT',
  /** A hash chain link does not recompute. data: seq, file. */
  EVIDENCE_CHAIN_BROKEN: 'MHS.EVIDENCE.CHAIN_BROKEN',
  /**
   * An intact endpoint chain whose entries deviate from the wire contract's shape (wire §9: a receipt body that
   * keeps `replayed`): a conformance finding about that endpoint, not tampering; the package stays verified.
   * data: endpoint_id, file, seq, rule, reason.
   */
  EVIDENCE_NONCONFORMING: 'MHS.EVIDENCE.NONCONFORMING',
  /**
   * A package whose chains all recompute but whose evidence was not all checked (issue 21): receipts with no
   * endpoint bundle to match, pruned or unbound lines; `ledger verify` exits 3. data: coverage.
   */
  EVIDENCE_PARTIAL: 'MHS.EVIDENCE.PARTIAL',
  REPLAY_DIVERGED: 'MHS.REPLAY.DIVERGED',
  HOST_ADAPTER_MISSING: 'MHS.HOST.ADAPTER_MISSING',
  /** The device has an unsettled command (HOST-091). data: device_id, command_id. */
  HOST_DEVICE_GATE_CLOSED: 'MHS.HOST.DEVICE_GATE_CLOSED',
  HOST_APPROVAL_DENIED: 'MHS.HOST.APPROVAL_DENIED',
  HOST_APPROVAL_REQUIRED: 'MHS.HOST.APPROVAL_REQUIRED',
  /** A human approval was not decided within the policy's or the CLI's approval timeout; it is recorded `expired` (HOST-043). data: approval_id. */
  HOST_APPROVAL_TIMEOUT: 'MHS.HOST.APPROVAL_TIMEOUT',
  HOST_POLICY_DENIED: 'MHS.HOST.POLICY_DENIED',
  /** The store cannot be written; new commands are refused until it recovers (HOST-093). */
  HOST_LEDGER_UNAVAILABLE: 'MHS.HOST.LEDGER_UNAVAILABLE',
  HOST_MANIFEST_INVALID: 'MHS.HOST.MANIFEST_INVALID',
  HOST_CONNECTOR_DISABLED: 'MHS.HOST.CONNECTOR_DISABLED',
  HOST_ENDPOINT_UNKNOWN: 'MHS.HOST.ENDPOINT_UNKNOWN',
  HOST_CONFIG_INVALID: 'MHS.HOST.CONFIG_INVALID',
  /** A device's mode/risk/determinism/fidelity disclosure cannot be rendered (HOST-073, HOST-013). data: source, problems. */
  HOST_DISCLOSURE_UNRENDERABLE: 'MHS.HOST.DISCLOSURE_UNRENDERABLE',
  /** A `/.well-known/mhs.json` descriptor is malformed or cannot be fetched (HOST-010). data: source, url. */
  HOST_DESCRIPTOR_INVALID: 'MHS.HOST.DESCRIPTOR_INVALID',
  /** An agent script (`mhs-host agent --script`) is malformed or refers to a result that does not exist. data: file, issues | ref. */
  HOST_AGENT_SCRIPT_INVALID: 'MHS.HOST.AGENT_SCRIPT_INVALID',
  /** A replay run's endpoint opened a session that is not in replay mode: nothing is sent (HOST-085). data: endpoint_id, device_id, mode. */
  HOST_REPLAY_REFUSED: 'MHS.HOST.REPLAY_REFUSED',
  /**
   * A composition (`mhs.composition.run`, experimental, HOST-084) was refused before anything was sent: the host's
   * experimental flag is off, or the endpoint does not advertise the extension. data: endpoint_id, reason
   * (`host_disabled` | `endpoint_not_advertised`).
   */
  HOST_COMPOSITION_DISABLED: 'MHS.HOST.COMPOSITION_DISABLED',
  /** A replay plan or package cannot be used: malformed, not verifiable, or the selection matches nothing (HOST-057). data: source, problem. */
  HOST_REPLAY_PLAN_INVALID: 'MHS.HOST.REPLAY_PLAN_INVALID',
  /**
   * A host MCP client other than the governed MHS connector (`ctx.mcp`) was pointed at an MHS endpoint; nothing was
   * sent to it (HOST-020: the governed call is the only path to a device; issue 14). Raised when the servers file is
   * loaded (an entry names a connector row's URL, base URL or stdio command; data: source, servers
   * [{serverId, connector_id, match}]) and at connect or call time (the server lists `mhs__` tools or the
   * `mhs://manifest` resource, or a call names one; data: serverId, phase, detectedBy, tools?, connector_id?).
   * Never retryable.
   */
  HOST_MCP_SERVER_IS_MHS_ENDPOINT: 'MHS.HOST.MCP_SERVER_IS_MHS_ENDPOINT',
  // Model providers (src/ai/providers/, issue 15). details never carry an API key; data: provider, model, plus the keys named.
  /** A `--model` spec, base URL or key is missing or malformed, or the provider answered 404 (unknown model or wrong base URL). data: spec | env | status. */
  HOST_MODEL_CONFIG: 'MHS.HOST.MODEL_CONFIG',
  /** The provider refused the API key (401) or its permissions (403). data: status, type?, request_id?. */
  HOST_MODEL_AUTH: 'MHS.HOST.MODEL_AUTH',
  /** Rate limit or quota (429) still refused after the SDK's retries. data: status, reason (rate_limited | insufficient_quota), retry_after_s?. */
  HOST_MODEL_QUOTA: 'MHS.HOST.MODEL_QUOTA',
  /** The provider could not be reached, timed out, or answered 5xx/529 after the SDK's retries. data: reason (timeout | connection | server), status?. */
  HOST_MODEL_UNAVAILABLE: 'MHS.HOST.MODEL_UNAVAILABLE',
  /** The conversation exceeds the model's context window (or the request size limit). data: status, type?. */
  HOST_MODEL_CONTEXT_TOO_LONG: 'MHS.HOST.MODEL_CONTEXT_TOO_LONG',
  /** The provider rejected the request itself (another 4xx). data: status, type?, code?. */
  HOST_MODEL_REQUEST_REJECTED: 'MHS.HOST.MODEL_REQUEST_REJECTED',
  /** The provider's answer cannot be used: tool arguments that are not a JSON object, a truncated tool call, a malformed stream. data: reason, tool?. */
  HOST_MODEL_RESPONSE_INVALID: 'MHS.HOST.MODEL_RESPONSE_INVALID',
  /** The model call was cancelled through the caller's AbortSignal. data: provider, model. */
  HOST_MODEL_ABORTED: 'MHS.HOST.MODEL_ABORTED',
  /**
   * `serve` could not listen: another process holds the TCP port. Raised before the store is opened, so nothing is
   * attached, recovered or resumed (issue 16), or, when the port was taken in between, after everything started was
   * stopped again. data: port, host. Never retryable as is: stop the other process or pass another `--port`.
   */
  HOST_PORT_IN_USE: 'MHS.HOST.PORT_IN_USE',
  /**
   * A value to be canonicalised (RFC 8785) or recorded holds a string JCS cannot encode: a lone UTF-16 surrogate
   * in a key or a value (issue 16 item 3). Nothing was written. data: path (JSON Pointer), reason.
   */
  HOST_JSON_UNENCODABLE: 'MHS.HOST.JSON_UNENCODABLE',
  /**
   * An endpoint answered with data the host cannot record as is (a receipt or fault with a string JCS cannot
   * encode): a protocol fault of that endpoint alone, recorded as an `error` entry naming it; other endpoints and
   * the ledger are unaffected, and the command's outcome is unknown until reconciled (issue 16 item 3).
   * data: endpoint_id, command_id?, path, reason.
   */
  HOST_ENDPOINT_PROTOCOL_FAULT: 'MHS.HOST.ENDPOINT_PROTOCOL_FAULT',
  /**
   * The CLI cannot write where it was told to: `--out` names an existing file (or a non-empty folder), the disk is
   * full (ENOSPC), or the path is read-only or not permitted. Nothing partial is left behind (issue 16 item 3).
   * data: path?, errno?.
   */
  HOST_OUTPUT_UNWRITABLE: 'MHS.HOST.OUTPUT_UNWRITABLE',
  /**
   * A credential kept in the store cannot be opened: the host secret key is missing, malformed or not the one
   * it was sealed with (issue 20). data: key_source, connector_id?.
   */
  HOST_SECRET_KEY_INVALID: 'MHS.HOST.SECRET_KEY_INVALID',
  /**
   * The host process stopped (crash, kill) after a governed call took its approval (and permit) and before it
   * journalled the command's intent: nothing was sent. Recorded on restart as the code of the approval's
   * `not_executed` entry, with its permit revoked (issue 16, HOST-041, 047, 070); a new call needs a new approval.
   * data: approval_id, permit_id?.
   */
  HOST_INTERRUPTED: 'MHS.HOST.INTERRUPTED',
  /**
   * This host process no longer holds the lease of an OpenWOP run on a shared store (issue 19): another process took
   * it over (a higher fencing token) after this one's lease lapsed, so the append or patch was refused in the same
   * transaction and nothing was written. The process stops driving that run (it steps down, never retries the write).
   * data: runId, owner, token, heldBy?, heldToken? (the refused write); runId, owner, detectedBy (the step-down, logged).
   */
  HOST_RUN_LEASE_LOST: 'MHS.HOST.RUN_LEASE_LOST',
  /**
   * An endpoint is attached by one host process at a time on a shared PostgreSQL store (issue 19, endpoint leases):
   * this process does not hold the connector's lease (another holds it, or took it over). A ledger append that would
   * start a side effect on the endpoint is refused (nothing written, nothing sent) and the endpoint is detached here;
   * a connect asked of a non-holder is refused before anything is opened. data: connectorId, owner, token, heldBy?,
   * heldToken?.
   */
  HOST_ENDPOINT_LEASE_LOST: 'MHS.HOST.ENDPOINT_LEASE_LOST',
  /**
   * A governed call forwarded to the host process that holds the endpoint's lease (issue 19, `endpoint_requests`)
   * was not started by it within the wait: the stored request was withdrawn, so nothing was or will be sent for it.
   * Safe to send again. data: requestId, endpointId, connectorId, heldBy.
   */
  HOST_ENDPOINT_FORWARD_TIMEOUT: 'MHS.HOST.ENDPOINT_FORWARD_TIMEOUT',
  /**
   * An interrupt answer or variable write sent to a process that does not drive the run was stored for the one that
   * does, which had not applied it within the wait (its owner died and no process took the run over yet; issue 19).
   * The request stays stored and is applied exactly once by the next owner: read the run, do not send it again.
   * data: runId, requestId, kind.
   */
  HOST_RUN_REQUEST_PENDING: 'MHS.HOST.RUN_REQUEST_PENDING',
  /**
   * A route was registered that has no row in the route × role table (src/server/route-roles.ts, issue 20): the
   * app does not start (`serve` exits 1), and such a route is refused 403 if reached. data: routes.
   */
  HOST_ROUTE_UNMAPPED: 'MHS.HOST.ROUTE_UNMAPPED',
  /**
   * A federated registry record carries a signature that no configured registry key verifies (issue 20, HOST-014):
   * the record is refused (never stored or listed) and the refusal recorded. data: source, index, reason.
   */
  HOST_REGISTRY_SIGNATURE_INVALID: 'MHS.HOST.REGISTRY_SIGNATURE_INVALID',
  HOST_INTERNAL: 'MHS.HOST.INTERNAL',
  // OpenWOP host codes (REST error envelope `{error, message, details?}`).
  VALIDATION_ERROR: 'validation_error',
  /**
   * A conformance seam's request is missing or has a malformed field (`POST /v1/host/sample/test/llm-cache-key`:
   * `provider`, `model`, `messages` or a recipe field of the wrong type; host-sample-test-seams.md §4): 400.
   * data: path.
   */
  INVALID_ARGUMENT: 'invalid_argument',
  /**
   * `X-Force-Engine-Version` on `POST /v1/runs` of a host whose test seams are off (version-negotiation.md
   * §"Conformance via X-Force-Engine-Version": test keys only): 403. data: path.
   */
  FORCE_ENGINE_VERSION_FORBIDDEN: 'force_engine_version_forbidden',
  /**
   * `X-Force-Engine-Version` names a version outside `testing.forceEngineVersionRange` (or is no integer): 400.
   * data: requested, min, max.
   */
  UNSUPPORTED_FORCE_ENGINE_VERSION: 'unsupported_force_engine_version',
  /**
   * `configurable.mockProvider` on a run of a host whose test seams are off (run-options.md §"Mock provider
   * extension" §Authorization: test keys only): 403. data: requestedProvider, supportedProviders.
   */
  MOCK_PROVIDER_FORBIDDEN: 'mock_provider_forbidden',
  /**
   * v2 `configurable.ai.credentialRef` names no provider in `aiProviders.byok` (v2 runs.md §"ai section"; this host
   * advertises no BYOK providers, so every reference is refused): 403. data: field.
   */
  CREDENTIAL_FORBIDDEN: 'credential_forbidden',
  /** `configurable.mockProvider.id` not in `testing.mockProviders` (run-options.md): 400. data: requestedProvider, supportedProviders. */
  UNSUPPORTED_MOCK_PROVIDER: 'unsupported_mock_provider',
  NOT_FOUND: 'not_found',
  UNAUTHORIZED: 'unauthorized',
  FORBIDDEN: 'forbidden',
  CONFLICT: 'conflict',
  HOST_CAPABILITY_MISSING: 'host_capability_missing',
  /** The host does not advertise the capability this REST operation needs (e.g. `/v1/prompts*` without `prompts.endpointsSupported`): 501. data: capability. */
  CAPABILITY_NOT_PROVIDED: 'capability_not_provided',
  /** ctx.mcp (RFC 0144): the MCP server answered with a JSON-RPC error. data: serverId, error {code, message, data?} unaltered. */
  MCP_ERROR: 'mcp_error',
  /** ctx.mcp (RFC 0144): the MCP server could not be reached or its reply was unusable (connect, send, timeout). data: serverId, sdkCode?. */
  MCP_TRANSPORT: 'mcp_transport_error',
  /** v1 `ctx.mcp.invokeTool` / `serverStatus` (host-capabilities.md §host.mcp): the host configures no such serverId. data: serverId. */
  MCP_SERVER_NOT_FOUND: 'mcp_server_not_found',
  /** v1 `ctx.mcp`: the server could not be reached or its reply was unusable. data: serverId, v2Code. */
  MCP_SERVER_DISCONNECTED: 'mcp_server_disconnected',
  /** v1 `ctx.mcp.invokeTool`: the server refused the call and its tool list lacks the tool. data: serverId, error. */
  MCP_TOOL_NOT_FOUND: 'mcp_tool_not_found',
  /** v1 `ctx.mcp.invokeTool`: the server answered the call with a JSON-RPC error. data: serverId, error. */
  MCP_TOOL_INVOCATION_FAILED: 'mcp_tool_invocation_failed',
  /**
   * ctx.mcp: the server's revision is below `minimumRevision` or outside the ladder the host offers (v2 interop.md
   * §The floor): the connection fails closed before any request is sent; 400 (v2 errors.json). data: serverId,
   * offered, minimumRevision, revisions.
   */
  INTEROP_VERSION_UNSUPPORTED: 'interop_version_unsupported',
  INTERNAL: 'internal_error',
  /**
   * A node re-executed after a crash found its effect (an MCP tool call) claimed and never completed: whether the
   * provider performed it is unknown, so it is not sent again (v2 idempotency.md Layer 2: a retried node MUST NOT
   * issue a second external effect); the effect record stays `claimed`. Also raised when another executor holds the
   * claim. data: effectId, seam, nodeId, attempt.
   */
  EFFECT_OUTCOME_UNKNOWN: 'effect_outcome_unknown',
  /** A replay fork reached a side-effecting node the source run recorded no outcome for; the effect was not performed (replay.md RFC 0140 rule 3). data: sourceRunId, nodeId, execution. */
  REPLAY_SOURCE_MISSING: 'replay_source_missing',
  /** A replay fork's model answer is a refusal where the source's was valid, or the reverse; `replay.divergedAtRefusal` is in the log (RFC 0041 §B). data: sourceRunId, atSequence, nodeId, originalEnvelopeKind, replayEnvelopeKind. */
  REPLAY_DIVERGED_AT_REFUSAL: 'replay_diverged_at_refusal',
  /** The model refused a structured-output call; `envelope.refusal` is in the log, never retried (RFC 0032 §B.3). data: provider, model. */
  ENVELOPE_REFUSAL: 'envelope_refusal',
  /**
   * A structured-output answer still fails validation after `limits.schemaRounds` retries: `core.ai.structuredOutput`
   * (outputSchema; data: provider, model, errors) and `ctx.aiEnvelope.generate` (ai-envelope.md §Schema-violation
   * path, after `envelope.retry.exhausted` and `cap.breached {kind: schema}`; data: envelopeType, rounds, errors).
   */
  ENVELOPE_INVALID: 'envelope_invalid',
  // Host service families ctx.promptLibrary / ctx.aiEnvelope / ctx.agentRuntime (RFC 0144, RFC 0027-0029).
  /** A PromptRef names no template in the library (host-capabilities.md §host.promptLibrary). data: ref. */
  PROMPT_NOT_FOUND: 'prompt_not_found',
  /** A pinned PromptRef's version is not in the library (never substituted, RFC 0144). data: ref, available. */
  PROMPT_VERSION_PINNED: 'prompt_version_pinned',
  /** `ctx.promptLibrary.get` was given a PromptRef without `@version` (RFC 0144: never substitute one). data: ref. */
  PROMPT_REF_UNPINNED: 'prompt_ref_unpinned',
  /** A PromptRef does not match prompt-ref.schema.json, or names a kind other than its slot. data: ref, errors. */
  PROMPT_REF_INVALID: 'prompt_ref_invalid',
  /** A template file fails prompt-template.schema.json or cannot be read (RFC 0028 §C). data: file, errors. */
  PROMPT_TEMPLATE_INVALID: 'prompt_template_invalid',
  /** A template id@version already stored with a different body (templates are immutable). data: ref. */
  PROMPT_TEMPLATE_CONFLICT: 'prompt_template_conflict',
  /** A required template variable has no binding (RFC 0027 §A). data: ref, variable. */
  PROMPT_VARIABLE_UNRESOLVED: 'prompt_variable_unresolved',
  /** The supervisor model's answer is not a valid OrchestratorDecision after its re-asks. data: envelopeType, errors. */
  ENVELOPE_VALIDATION_FAILED: 'envelope_validation_failed',
  /** The model's answers stayed truncated (`max_tokens`) after `limits.schemaRounds` budget-doubled retries (RFC 0033 §B). data: envelopeType, rounds. */
  ENVELOPE_TRUNCATION_UNRECOVERABLE: 'envelope_truncation_unrecoverable',
  /** An envelope kind the host does not list in `supportedEnvelopes` (ai-envelope.md). data: envelopeType. */
  UNKNOWN_ENVELOPE_KIND: 'unknown_envelope_kind',
  /** Same idempotencyKey reused with a different request (ai-envelope.md correlation conflict). data: key. */
  ENVELOPE_CORRELATION_CONFLICT: 'envelope_correlation_conflict',
  /** The model provider failed or refused the call. data: provider, cause. */
  PROVIDER_UNAVAILABLE: 'provider_unavailable',
  /** An engine limit (`limits.*`) was exceeded; `cap.breached` is in the run log. data: kind, limit. */
  CAP_BREACHED: 'cap_breached',
  /** An agent id, manifest id or agent instance is unknown to the agent runtime. data: agentId. */
  AGENT_NOT_FOUND: 'agent_not_found',
  /** More agent instances spawned in a run than the runtime allows. data: limit. */
  AGENT_SPAWN_QUOTA_EXHAUSTED: 'agent_spawn_quota_exhausted',
  /** Consensus ran `maxRounds` rounds without reaching the threshold. data: rounds, threshold. */
  CONSENSUS_MAX_ROUNDS_EXCEEDED: 'consensus_max_rounds_exceeded',
  // Agent-manifest runtime (RFC 0070, RFC 0003 installAgents).
  /** An agent pack's pack.json is unreadable or fails node-pack-manifest / agent-manifest schema (RFC 0003 §A). data: pack, errors. */
  AGENT_PACK_INVALID: 'agent_pack_invalid',
  /** An agentId outside its pack's namespace (RFC 0003 §B). data: pack, agentId. */
  AGENT_PACK_NAMESPACE: 'agent_pack_namespace_violation',
  /** A pack name@version already installed with other content, or an agentId another pack installed. data: pack, agentId?. */
  AGENT_PACK_CONFLICT: 'agent_pack_conflict',
  /** An agent's systemPromptRef does not resolve (missing, not UTF-8, escapes the pack, or not in the prompt library; RFC 0003 §C). data: pack, agentId, ref, cause. */
  AGENT_PROMPT_UNRESOLVED: 'agent_prompt_unresolved',
  /** A handoff.*SchemaRef is missing, escapes the pack or is not a JSON Schema 2020-12 document (RFC 0003 §D). data: pack, agentId, ref. */
  AGENT_HANDOFF_SCHEMA_INVALID: 'agent_handoff_schema_invalid',
  /** A dispatched agent's task payload fails its handoff.taskSchemaRef (RFC 0070 handoffValidation). data: agentId, errors. */
  HANDOFF_TASK_INVALID: 'handoff_task_invalid',
  /** A dispatched agent's result fails its handoff.returnSchemaRef (RFC 0070 handoffValidation). data: agentId, errors. */
  HANDOFF_RETURN_INVALID: 'handoff_return_invalid',
  /** A manifest agent called a tool outside its toolAllowlist; the tool was not invoked (RFC 0002 §A14). data: agentId, toolName. */
  TOOL_NOT_ALLOWED: 'tool_not_allowed',
  /** A manifest agent called an allowlisted tool this host does not provide. data: agentId, toolName. */
  TOOL_UNAVAILABLE: 'tool_unavailable',
  /** A host tool a manifest agent called failed. data: agentId, toolName. */
  TOOL_FAILED: 'tool_failed',
  /** A pack needs a capability tier this host does not meet (RFC 0070 §D refusal). data: pack, requiredCapability, agentId?. */
  UNSUPPORTED_CAPABILITY: 'unsupported_capability',
  /** A conversation turn names a speakerId outside the conversation's roster; the turn is not consumed (RFC 0239 §B). data: speakerId. */
  CONVERSATION_SPEAKER_NOT_PARTICIPANT: 'conversation_speaker_not_participant',
  /** A core.conversationGate roster exceeds multiPartyConversation.maxParticipants; no run is created (RFC 0239 §C). data: maxParticipants, nodeId, size. */
  CONVERSATION_ROSTER_EXCEEDED: 'conversation_roster_exceeded',
  // OpenWOP major 2 (spec/v2/errors.json); raised by the v2 projection and its negotiation.
  /** A `/v1/…` request carries `OpenWOP-Version` other than 1 (v2 versioning.md §1.3): 400. data: requested. */
  PROTOCOL_VERSION_MISMATCH: 'protocol_version_mismatch',
  /** `OpenWOP-Version` names a major the host does not serve (v2 versioning.md §1.3): 406. data: protocolVersions, requested. */
  PROTOCOL_VERSION_UNSUPPORTED: 'protocol_version_unsupported',
  /** A tenant-bound id names another tenant than the caller's (v2 identity.md §5): 403; existence is not disclosed. */
  ID_TENANT_MISMATCH: 'id_tenant_mismatch',
  /** A stored event type has no row in spec/v2/event-codemap.json and no vendor org (v2 events.md §Era-2 logs): 500. data: type, sequence. */
  EVENT_TYPE_UNMAPPED: 'event_type_unmapped',
  /** `streamMode` outside the v2 pattern or not served here (v2 events.md §The events channel): 400. data: supported. */
  UNSUPPORTED_STREAM_MODE: 'unsupported_stream_mode',
  /** A v2 create replays an `Idempotency-Key` with a different body (v2 idempotency.md): 409. data: none. */
  IDEMPOTENCY_KEY_MISMATCH: 'idempotency_key_mismatch',
  /** A v2 `Idempotency-Key` outside `^[A-Za-z0-9._~-]{22,128}$` (v2 idempotency.md Layer 1): 400. data: field. */
  IDEMPOTENCY_KEY_INVALID: 'idempotency_key_invalid',
  /** A v2 request whose `Idempotency-Key` another request is still processing (v2 idempotency.md): 409, `Retry-After`. */
  IDEMPOTENCY_IN_FLIGHT: 'idempotency_in_flight',
  /** A v2 fork's `fromSeq` is not in the source run's log (v2 runs.md §Fork): 422. data: sourceRunId, lastSequence. */
  FORK_POINT_INVALID: 'fork_point_invalid',
  /** A v2 cancel on a run already completed, failed or cancelled (v2 runs.md §Cancel): 409. data: runStatus. */
  RUN_TERMINAL: 'run_terminal',
  /** A v2 resolve of an interrupt already resolved, or on a run that ended (v2 interrupt.md §Errors): 409. data: nodeId. */
  INTERRUPT_ALREADY_RESOLVED: 'interrupt_already_resolved',
  /** An interrupt its run ended without resolving (a cascaded cancel): 410 (interrupt-profiles.md §openwop-interrupt-cascade-cancel). data: runId, nodeId, status. */
  INTERRUPT_INVALIDATED: 'interrupt_gone',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const ALL = new Set<string>(Object.values(ErrorCode));

/** True when `code` is in the registry. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && ALL.has(code);
}

/** Codes whose failure happened before anything was sent: a retry is safe (HOST-091). */
export const RETRYABLE_CODES: ReadonlySet<ErrorCode> = new Set([
  ErrorCode.TRANSPORT_TIMEOUT_PRESEND,
  ErrorCode.TRANSPORT_DISCONNECTED,
  ErrorCode.LIMIT_RATE,
  ErrorCode.HOST_LEDGER_UNAVAILABLE,
]);
