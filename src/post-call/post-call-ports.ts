/**
 * @module What post-call ingestion needs from the providers layer (payload parsers, signature
 * checks, the safe recording downloader), declared here because post-call/ may not import
 * providers. The provider functions satisfy these types structurally; the composition root
 * (gateway.ts) and the test harness pass them in.
 */
import type { RecordingFiles } from '../common/recording-files.js';

/**
 * A provider whose post-call webhooks are ingested: a path segment `/v1/webhooks/{provider}`. The
 * list is the providers registry's (the keys of {@link WebhookPorts.vendors}), not this layer's.
 */
export type WebhookProvider = string;

/** A normalized post-call payload (the providers layer's `PostCallPayload`). */
export interface PostCallEvent {
  kind: 'post_call';
  provider: string;
  event: string;
  conversationId: string;
  agentId: string | null;
  agentNumber: string | null;
  remoteNumber: string | null;
  direction: 'inbound' | 'outbound' | null;
  /** Epoch milliseconds. */
  startedAt: number | null;
  endedAt: number | null;
  turns: readonly { role: 'caller' | 'agent'; text: string; offsetS: number | null }[];
  recording: { inline?: Buffer; url?: string; mediaType: string } | null;
  failureReason: string | null;
  raw: unknown;
}

export type PostCallParse = PostCallEvent | { kind: 'ignored'; reason: string } | { kind: 'invalid'; reason: string };

export type SignatureOutcome = 'valid' | 'invalid' | 'stale' | 'missing';

/** The downloader's limits the endpoint decides from configuration. */
export interface RecordingDownloadLimits {
  allowedHosts: readonly string[];
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

export type RecordingDownload =
  | { ok: true; bytes: Buffer; mediaType: string; sha256: string }
  | { ok: false; reason: string; detail: string };

/** One provider's post-call webhook (the registry's `PostCallWebhook` with the vendor's display name). */
export interface PostCallVendor {
  displayName: string;
  parse(json: unknown): PostCallParse;
  /** The vendor's signature rule; it reads the vendor's own headers through `header` (lower-case names). */
  verifySignature(rawBody: string, header: (name: string) => string | undefined, secret: string, nowMs: number): SignatureOutcome;
}

export interface WebhookPorts {
  /** Every provider whose post-call webhooks are ingested, in route order (the providers registry's). */
  vendors: ReadonlyMap<WebhookProvider, PostCallVendor>;
  /** Never throws for anything the URL or the remote server does (the safe downloader's contract). */
  downloadRecording(url: string, limits: RecordingDownloadLimits): Promise<RecordingDownload>;
}

/** The webhook settings, compiled from configuration. */
export interface WebhookOptions {
  /** A call's end must lie within this of now. */
  attributionWindowMs: number;
  /** Signing secrets; a provider without one is not checked. */
  secrets: Partial<Record<WebhookProvider, string>>;
  /** Recording hosts allowed per provider (exact names or `*.suffix`); empty means never download. */
  recordingHosts: Readonly<Partial<Record<WebhookProvider, readonly string[]>>>;
  downloadMaxBytes: number;
  downloadTimeoutMs: number;
  downloadMaxRedirects: number;
  /** Raw bodies kept for audit: per call (conflicts between tenants share one allowance) and in all. */
  maxRawBytesPerCall: number;
  maxRawBytesTotal: number;
  /** Where archived recordings are written (`<tenant>/<call>.provider.<ext>`) and read. */
  recordings: RecordingFiles;
  bodyLimitBytes: number;
}
