/**
 * @module What a call leaves after it ends, as the control API and the composition root use it:
 * provider post-call webhooks (signature, attribution, first attribution wins, audit copies),
 * provider recordings re-archived into the data folder, and the recording a call serves
 * (docs/WEBHOOKS.md). It reaches storage through its repositories and the providers only through
 * the ports of `post-call-ports.ts`.
 */
export { PostCallWebhooks, type PostCallDeps, type PostCallDelivery, type PostCallOutcome } from './post-call-webhooks.js';
export { findCallRecording, type CallRecordingDeps } from './call-recording.js';
export type { RecordingFile, RecordingFormat } from './recording-format.js';
export {
  type PostCallEvent, type PostCallVendor, type PostCallParse, type RecordingDownload, type RecordingDownloadLimits,
  type SignatureOutcome, type WebhookOptions, type WebhookPorts, type WebhookProvider,
} from './post-call-ports.js';
