/** @module Latency samples of the media_bridge benchmark: the series each phase collects and their percentiles. */

/** Latency series of one phase, in milliseconds. */
export interface LegSamples {
  /** Caller RTP sent by the phone → the frame handed to the provider (`AgentLink.sendAudio`). */
  callerTotal: number[];
  /** The same, from the moment the leg's RTP session passes the packet on (`onRtp`): the leg's own work. */
  callerInLeg: number[];
  /** Provider audio in (`onAudio`) → the first RTP packet carrying it received by the phone. */
  agentTotal: number[];
  /** Of that, the wait until the pacer's next 20 ms slot, which the design adds (0-20 ms). */
  agentPacerSlot: number[];
  /** `agentTotal` minus the slot wait: pacer timer lateness, encoding, sending, the kernel and the phone's receive. */
  agentAdded: number[];
}

/** Bare UDP between two plain sockets in the same process, the anchor. */
export interface AnchorSamples {
  oneWay: number[];
  roundTrip: number[];
}

export const emptyLegSamples = (): LegSamples => ({ callerTotal: [], callerInLeg: [], agentTotal: [], agentPacerSlot: [], agentAdded: [] });

/** Nearest-rank percentile (p in 0..100) of unsorted values; NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

/** p50 and p99 of a series, with its size. */
export interface Summary {
  p50: number;
  p99: number;
  n: number;
}

export const summarise = (values: readonly number[]): Summary => ({ p50: percentile(values, 50), p99: percentile(values, 99), n: values.length });
