/** @module The live numbers of an agent media leg, as GET /v1/calls/{id} `session` shows them (docs/API.md "Calls"). */
import type { RtpSession } from '../../../media/index.js';
import type { AgentLink } from '../../ports.js';
import type { AgentMediaLegStats } from '../../session-snapshot.js';
import { describeFormat, type AgentAudioDecoder, type CallerAudioEncoder } from './agent-audio-format.js';
import type { CallerSpeechDetector } from './caller-speech-detector.js';
import type { CarrierPlayout } from './carrier-playout.js';

/** What the leg counts itself (the conversions, the link and the RTP session count the rest). */
export type AgentMediaLegCounts = Pick<AgentMediaLegStats, 'packetsDropped' | 'digits' | 'clears' | 'marks' | 'agentChunks' | 'agentChunksDiscarded' | 'bargeIns'>;

/**
 * When the agent's audio arrives, for call quality (docs/API.md "Call quality"): the time from the
 * leg's start (the answer) to the first chunk, and the largest gap between two chunks, which
 * includes the agent's pauses between turns. Two numbers per chunk, no allocation.
 */
export class AgentAudioTiming {
  readonly #startedAt: number;
  #firstAt = -1;
  #lastAt = 0;
  largestGapMs = 0;

  constructor(startedAt: number) {
    this.#startedAt = startedAt;
  }

  heard(now: number): void {
    if (this.#firstAt < 0) this.#firstAt = now;
    else if (now - this.#lastAt > this.largestGapMs) this.largestGapMs = now - this.#lastAt;
    this.#lastAt = now;
  }

  /** From the leg's start to the agent's first audio; null while none came. */
  get firstAudioMs(): number | null {
    return this.#firstAt < 0 ? null : this.#firstAt - this.#startedAt;
  }
}

export function agentMediaLegStats(p: {
  codec: string; held: boolean; rtp: RtpSession; counts: AgentMediaLegCounts; playout: CarrierPlayout; timing: AgentAudioTiming;
  encoder: CallerAudioEncoder | null; decoder: AgentAudioDecoder | null; speech: CallerSpeechDetector | null; link: AgentLink | null;
}): AgentMediaLegStats {
  const rtp = p.rtp.stats();
  return {
    codec: p.codec,
    agentInput: p.encoder ? describeFormat(p.encoder.format) : null,
    agentOutput: p.decoder ? describeFormat(p.decoder.format) : null,
    held: p.held,
    framesToAgent: p.encoder?.framesSent ?? 0,
    framesToAgentDropped: p.link?.audioFramesDropped ?? 0,
    ...p.counts,
    framesToCarrier: p.playout.framesToCarrier,
    ...p.playout.stats,
    bargeIn: p.link?.bargeIn ?? 'platform',
    callerSpeaking: p.speech?.isSpeaking ?? false,
    callerSpeechStarts: p.speech?.stats.speechStarts ?? 0,
    callerSpeechStops: p.speech?.stats.speechStops ?? 0,
    echoFrames: p.speech?.stats.echoFrames ?? 0,
    firstAgentAudioMs: p.timing.firstAudioMs,
    largestAgentAudioGapMs: p.timing.largestGapMs,
    rtp: {
      localPort: rtp.localPort,
      packetsSent: rtp.packetsSent,
      octetsSent: rtp.octetsSent,
      packetsReceived: rtp.packetsReceived,
      packetsRejected: rtp.packetsRejected,
      packetsLost: rtp.reception.packetsLost,
      jitterMs: rtp.reception.jitterMs,
    },
  };
}
