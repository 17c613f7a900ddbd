/** @module Public surface of the provider adapters: the contract types and the registry. */
export {
  CONNECTION_MODES,
  SIP_TRANSPORTS,
  type ConnectionMode,
  type EndpointOverrides,
  type ProviderAdapter,
  type ProviderEndpoints,
  type SipTransport,
  type SipUriOptions,
  type VerifyInput,
  type VerifyOutcome,
  type VerifyResult,
} from './provider-adapter.js';
export {
  OWN_PROTOCOL_VENDOR,
  PROVIDER_NAMES,
  VENDORS,
  createProviderRegistry,
  isProviderName,
  postCallWebhooks,
  vendorOf,
  type ProviderName,
  type ProviderOverrides,
  type ProviderRegistry,
  type RegistryOptions,
} from './registry.js';
export type { CallRegistrationInput, PostCallWebhook, SipEdge, SipEdgeCall, VendorDescriptor } from './vendor.js';
export { DEFAULT_TIMEOUT_MS, DEFAULT_RETRY_BACKOFF_MS } from './http-verify.js';
export {
  MULAW_8000,
  PCM16_16000,
  ProviderError,
  bytesPerMs,
  type AgentCallInfo,
  type AgentCloseInfo,
  type AgentEndpoint,
  type AgentLogLevel,
  type AgentSession,
  type AgentSessionFactory,
  type AgentSessionHandlers,
  type AgentSessionLog,
  type AgentSessionOptions,
  type AgentTranscript,
  type AudioEncoding,
  type AudioFormat,
  type ProviderErrorKind,
} from './agent-session.js';
export { createStreamingRegistry, type StreamingRegistry } from './streaming-registry.js';
export {
  POST_CALL_LIMITS,
  type PostCallParseResult,
  type PostCallPayload,
  type PostCallProvider,
  type PostCallRecording,
  type TranscriptTurn,
} from './post-call-payload.js';
export { parseElevenLabsWebhook } from './elevenlabs/post-call-webhook.js';
export { parseRetellWebhook } from './retell/post-call-webhook.js';
export { registerRetellCall, type RetellRegistration } from './retell/register-call.js';
export { parseVapiWebhook } from './vapi/post-call-webhook.js';
export type { SignatureOutcome } from './webhook-signatures.js';
export { verifyElevenLabsSignature } from './elevenlabs/webhook-signature.js';
export { verifyRetellSignature } from './retell/webhook-signature.js';
export { verifyVapiSignature, type VapiHmacPlan } from './vapi/webhook-signature.js';
export {
  downloadRecording,
  type DownloadFailure,
  type DownloadOptions,
  type DownloadResult,
} from './recording-download/download-recording.js';
export type { HostResolver as Resolver, ResolvedAddress } from '../common/outbound-policy.js';
