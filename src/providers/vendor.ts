/**
 * @module What one vendor folder (`providers/<vendor>/vendor.ts`) declares: everything the gateway
 * knows about a voice-agent platform, in one object. The registry (`providers/registry.ts`) is
 * built from these descriptors; nothing else in the code lists vendors (docs/PROVIDERS.md,
 * "Adding a vendor").
 */
import type { AgentSessionFactory } from './agent-session.js';
import type { AdapterOptions } from './http-adapter.js';
import type { PostCallParseResult } from './post-call-payload.js';
import type { ProviderAdapter, ProviderEndpoints, SipTransport } from './provider-adapter.js';
import type { SignatureOutcome } from './webhook-signatures.js';

/** The call a sip_trunk INVITE is sent for, as the SIP edge specifics need it. */
export interface SipEdgeCall {
  callId: string;
  /** Caller, E.164 or SIP user. */
  from: string;
  /** Called party, E.164 or SIP user. */
  to: string;
  /** Inbound: the carrier's caller reaches the agent; outbound: a call placed with the agent's id (docs/API.md "Calls"). */
  direction?: 'inbound' | 'outbound';
}

/** Inputs of {@link SipEdge.registerCall}. The key is used for this one request, never kept. */
export interface CallRegistrationInput {
  /** The agent's region's endpoints, after configuration overrides. */
  endpoints: ProviderEndpoints;
  /** The tenant's stored key of the agent, null when none is stored. */
  apiKey: string | null;
  externalAgentId: string;
  call: SipEdgeCall;
  transport: SipTransport;
  timeoutMs: number;
}

/** How a sip_trunk call reaches the platform's SIP edge, beyond the adapter's default SIP URI. */
export interface SipEdge {
  /** Headers the platform documents for identifying the call on its side, in order. */
  callHeaders(call: SipEdgeCall): [string, string][];
  /**
   * Present when the platform's edge routes on a per-call registration rather than on the dialled
   * number (Retell): the URI to dial when the agent has no `sip_uri`, or why there is none (the
   * key never appears in the message).
   */
  registerCall?(input: CallRegistrationInput): Promise<{ uri: string } | { error: string }>;
}

/** The platform's post-call webhook: `POST /v1/webhooks/{name}` (docs/WEBHOOKS.md). */
export interface PostCallWebhook {
  /** Normalizes one JSON body; never throws, never does unbounded work. */
  parse(json: unknown): PostCallParseResult;
  /**
   * The platform's signature rule over the raw body, reading its own headers through `header`
   * (lower-case names); checked only when the operator configured a secret for the platform.
   */
  verifySignature(rawBody: string, header: (name: string) => string | undefined, secret: string, nowMs: number): SignatureOutcome;
}

/** One vendor: its name (config key, API value, webhook path segment) and every part it has. */
export interface VendorDescriptor<Name extends string = string> {
  readonly name: Name;
  /** As the vendor writes itself (API descriptions, log-free prose). */
  readonly displayName: string;
  /** Regions, endpoints, defaults (SIP transport, SIP URI, streaming URL) and the live verification. */
  createAdapter(options: AdapterOptions): ProviderAdapter;
  /** The media_bridge session; null when the platform has no streaming protocol (SIP only). */
  readonly streaming: AgentSessionFactory | null;
  readonly sipEdge: SipEdge;
  /** Null when the gateway ingests no post-call webhook from the platform. */
  readonly postCallWebhook: PostCallWebhook | null;
}

/** The headers most platforms take: the gateway's call id, so their logs can be matched to ours. */
export function callIdHeader(call: SipEdgeCall): [string, string][] {
  return [['X-Call-Id', call.callId]];
}

/** A vendor folder's descriptor, frozen (its parts included), with its name kept as a literal type. */
export function defineVendor<Name extends string>(descriptor: VendorDescriptor<Name>): VendorDescriptor<Name> {
  Object.freeze(descriptor.sipEdge);
  if (descriptor.postCallWebhook) Object.freeze(descriptor.postCallWebhook);
  return Object.freeze(descriptor);
}
