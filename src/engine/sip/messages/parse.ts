/** @module Parsing entry points: parseMessage for datagrams and framed messages, SipStreamFramer for streams. */
export { parseMessage, type ParseOptions, type ParseOutcome } from './message-parser.js';
export { SipStreamFramer, type SipStreamFramerOptions } from './stream-framer.js';
