// Anything added here is API.
export { buildApp } from './app.js';
export type { AppDeps, MountReport } from './app.js';
export { startHostServer } from './host-server.js';
export type { HostServer, HostServerOptions } from './host-server.js';
export { principalOf } from './auth.js';
export type { BearerVerifier, Principal } from './auth.js';
export { errorHandler, notFoundHandler, statusFor } from './errors.js';
export { openApiDocument } from './openapi.js';
export { REQUEST_SCHEMAS, checkBody } from './request-schemas.js';
