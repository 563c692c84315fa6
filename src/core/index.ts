// Anything added here is API.
export { jcs, H, sha256Hex, shortDigest } from './jcs.js';
export {
  GENESIS_PREV_DIGEST,
  chainLink,
  isCanonicalText,
  linkOverText,
  seal,
  sealWithText,
  storedChainLink,
  verifyChain,
} from './chain.js';
export type { ChainEntry, ChainCheck } from './chain.js';
export { ID_PREFIXES, createIdFactory, seededRandom, isId } from './ids.js';
export { pooledCryptoRandom } from './pooled-random.js';
export type {
  IdFactory,
  IdKind,
  SessionId,
  CommandId,
  PermitId,
  ApprovalId,
  OperationId,
  ReceiptId,
  RunId,
} from './ids.js';
export { ErrorCode, isErrorCode, RETRYABLE_CODES } from './error-codes.js';
export { HostError, toHostError } from './errors.js';
export type { MhsWireError } from './errors.js';
export { RealClock, SimulatedClock, isoAt } from './clock.js';
export type { Clock, TimerHandle } from './clock.js';
export { isJsonObject } from './json-object.js';
export { assertJcsEncodable, hasLoneSurrogate, unencodablePath, wellFormed } from './json-encodable.js';
