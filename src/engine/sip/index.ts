/**
 * @module The SIP layer's public surface for the calls layer: the user agent, its call and
 * session handles, registration, OPTIONS pings, digest authentication, the transport layer and
 * port, RFC 3263 server location with next-hop failover, and the UAS request checks.
 */
export { SipUserAgent, ALLOWED_METHODS, type SipUserAgentOptions, type SipUserAgentEvents, type InboundAuth } from './user-agent-core/sip-user-agent.js';
export { InboundCall, type InboundCallEvents } from './user-agent-core/inbound-call.js';
export { OutboundCall, type InviteOptions, type OutboundCallEvents } from './user-agent-core/outbound-call.js';
export { inviteWithFailover, type InviteStarter, type FailoverOutcome, type FailoverOptions } from './user-agent-core/invite-failover.js';
export { redirectTargets } from './user-agent-core/redirect.js';
export { reportListenerErrors, type ListenerErrorReporter } from './user-agent-core/typed-events.js';
export { parseUri, unescapeUri, type SipUri } from './grammar/uri.js';
export { SessionDialog, type SessionEvents, type SessionEndReason, type OfferHandler } from './dialogs/session-dialog.js';
export { parseDialogSnapshot, snapshotCSeq, SNAPSHOT_CSEQ_MARGIN, type DialogSnapshot } from './dialogs/dialog-snapshot.js';
export { byeFromSnapshot, SNAPSHOT_BYE_REASON, type SnapshotByeOutcome } from './user-agent-core/snapshot-bye.js';
export { ReferNotifier } from './dialogs/refer-notifier.js';
export { Registration, type RegistrationOptions, type RegistrationEvents } from './user-agent-core/registration.js';
export { OptionsPinger, type PingTarget, type TargetState, type OptionsPingerOptions } from './user-agent-core/options-pinger.js';
export type { SourceVerdict } from './user-agent-core/user-agent-core-delegate.js';
export { targetFromUri, type SipTransportPort, type SipSource, type SipTarget, type SipProtocol } from './user-agent-core/transport-port.js';
export { DigestServer, type DigestServerOptions, type DigestVerdict } from './auth/digest-server.js';
export type { DigestCredentials } from './auth/digest-client.js';
export { DEFAULT_TIMER_SETTINGS, type TimerSettings } from './transactions/timers.js';
export type { SipRequest, SipResponse, SipMessage } from './messages/sip-message.js';
export { parseMessage, type ParseOutcome } from './messages/message-parser.js';
export { TransportLayer, type TransportLayerOptions, type TransportLayerDelegate, type ListenOptions } from './transport/transport-layer.js';
export { ServerLocator, type ServerLocatorOptions, type ResolvedTarget, type DnsLookup } from './resolver/server-locator.js';
export { resolveNextHop, hopUri, locateAddresses } from './resolver/next-hop.js';
export { checkUasRequest, type UasCapabilities, type UasRejection } from './messages/uas-checks.js';
export type { SipTraceEvent, SipTraceTap } from './transport/sip-trace-tap.js';
