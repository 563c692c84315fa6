// Anything added here is API.
export type { CallGate, GateDecision, GovernedCallContext, ApprovalRecord } from './call-gate.js';
export { decideCall, autoApproveCeiling, riskRank } from './decide.js';
export type { PolicyOutcome, ApprovalMethod } from './decide.js';
export {
  DEFAULT_POLICY,
  DEFAULT_RETENTION,
  deploymentOf,
  loadPolicyFile,
  parsePolicyConfig,
  retentionOf,
} from './policy-config.js';
export { NO_DOCUMENT_DEPLOYMENT, decideDeployment, deploymentFromSection } from './deployment-policy.js';
export type { DeploymentAccess, DeploymentPolicy, DeploymentRefusal } from './deployment-policy.js';
export type { PolicyConfig, PolicyRule, RetentionPolicy } from './policy-config.js';
export { applyVote, policyRecord } from './approval-rules.js';
export type { ApprovalRequest, ApprovalStatus, HumanPrincipal, Vote, VoteResult } from './approval-rules.js';
export { APPROVAL_STATUSES } from './approval-rules.js';
export { buildApprovalView, estopStatement } from './approval-view.js';
export type { ApprovalView, InputLine } from './approval-view.js';
export { createApprovalStore } from './approval-store.js';
export type { ApprovalStore } from './approval-store.js';
export { createPolicyGate } from './policy-gate.js';
export { APPROVAL_POLL_ENV_VAR, DEFAULT_APPROVAL_POLL_MS, approvalPollMsFromEnv } from './approval-poll.js';
export type { PolicyGate, PolicyGateDeps } from './policy-gate.js';
export { createPermitService } from './permits.js';
export type { HostPermit, HostPermitState, PermitRequest, PermitService, PermitServiceDeps } from './permits.js';
export { createSafetyActions } from './estop.js';
export type { EstopOutcome, OperatorPrincipal, SafetyActions, SafetyActionsDeps } from './estop.js';
export { announceLedgerStatus, createOperatorEvents, observeLedger } from './operator-events.js';
export type { OperatorEvent, OperatorEvents } from './operator-events.js';
export type { EnablementPort, EndpointDirectory, EndpointSummary, OperatorLink } from './ports.js';
export { createTokenStore } from './tokens.js';
export type { TokenIdentity, TokenInfo, TokenRole, TokenStore } from './tokens.js';
export { createOperatorServices } from './operator-services.js';
export type { OperatorServices, OperatorServicesDeps } from './operator-services.js';
export { createOperatorLink } from './operator-link.js';
export type { OperatorLinkDeps } from './operator-link.js';
export { createConnectorDirectory } from './directory.js';
export type { ConnectorDirectoryDeps } from './directory.js';
export { guardPermits } from './permit-guard.js';
export { createEstopAllowList } from './estop-allow.js';
export type { EstopAllowance, EstopAllowList } from './estop-allow.js';
