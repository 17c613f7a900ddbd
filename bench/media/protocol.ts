/** @module Messages between the media benchmark's orchestrator, relay worker and load generator. */

/** The two load-generator endpoints of one call: caller and callee UDP ports on 127.0.0.1. */
export interface CallEndpoints {
  caller: number;
  callee: number;
}

/** Where each endpoint sends: the relay's port for its leg. */
export interface RelayPorts {
  callerTarget: number;
  calleeTarget: number;
}

/** What the load generator measured over one window. */
export interface WindowResult {
  sent: number;
  received: number;
  /** Packets the generator could not send within a period of their due time (machine too busy). */
  skipped: number;
  /** One-way latency through the relay, in milliseconds. */
  p50: number;
  p99: number;
  max: number;
  windowMs: number;
}
