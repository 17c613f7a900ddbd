/**
 * @module Shared shape of the four RFC 3261 §17 state machines: edge graphs (derived from each
 * machine's next-state function) and the illegal-edge error, the one every machine of the gateway throws.
 */
export { IllegalTransitionError } from '../../../common/errors.js';
export { assertEdge, deriveEdges, isLegalEdge, type EdgeGraph } from '../../../common/state-machine.js';
