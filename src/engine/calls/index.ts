/** @module The call layer's public surface: the call service and registry, the ports it needs, the sandbox far end, recovery. */
export { CallService, type CallServiceDeps, type CallServiceOptions } from './call-service.js';
export { CallRegistry, type LiveCall } from './call-registry.js';
export type { CallControl, CallCommandFailure, CallCommandResult, PlaceCallRequest } from './call-control.js';
export { isCallFailure } from './call-control.js';
export type { CallRecord, CallDirection, CallRecordState, CallDetailRecord } from './call-record.js';
export { callDetailRecord } from './call-record.js';
export { legMedia, type LegMedia, type LegMediaOptions } from './setup/leg-media.js';
export type { SipDialling } from './setup/sip-dialling.js';
export type { TranscriptionSettings } from './connected/transcription/call-transcriber.js';
export type { CarrierProfile, NumberFormat, CodecName } from './setup/carrier-profile.js';
export type { TransferPolicy } from './connected/transfer-policy.js';
export type {
  AgentAudioFormat, AgentCallInfo, AgentConnector, AgentLink, AgentLinkClose, AgentLinkHandlers, AgentTarget, CallRecordStore,
  HoldSource, InboundRoute, SipTrunkResolver, SipTrunkTarget, CallHappening, CallOutcome, CallLegName, CallSipTrace, AgentConnectObserver,
  DialogSnapshots, SnapshotLeg,
} from './ports.js';
export { recoverUnfinishedCalls, recordingPathOf } from './ending/recovery.js';
export { endCutOffCall, lastSignOfLife, type CutOffEnd, type CutOffReason } from './ending/cut-off.js';
export { Heartbeat, HEARTBEAT_FILE, HEARTBEAT_INTERVAL_MS } from './ending/heartbeat.js';
export { SandboxFarEnd, type SandboxFarEndOptions } from './sandbox/sandbox-far-end.js';
export { loadAnnouncement } from './sandbox/announcement.js';
export { loadWavPcm8k, wavToPcm8k } from './connected/audio-files.js';
export { CALL_STATES, type CallState } from './call-state.js';
export { END_REASONS, type EndReason, type EndReasonCode, type HangupBy } from './ending/end-reason.js';
