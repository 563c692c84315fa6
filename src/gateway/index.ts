export { createGateway, DEFAULT_APPROVAL_WAIT_MS, DEFAULT_GATEWAY_POLL_MS } from './gateway.js';
export type { Gateway, GatewayCaller, GatewayCallContext, GatewayOptions } from './gateway.js';
export { serveGatewayStdio } from './gateway-stdio.js';
export { createGatewayHttpHandler, agentOf } from './gateway-http.js';
export type { GatewayHttpHandler, AgentTokenVerifier } from './gateway-http.js';
export { gatewayPollMsFromEnv, GATEWAY_POLL_ENV_VAR } from './gateway-config.js';
export { MHS_UNAVAILABLE } from './gateway-instructions.js';
export { TOOL_META_KEY } from './gateway-tools.js';
