/**
 * @module What one fuzz input must survive: parseMessage (the UDP path) and SipStreamFramer (the
 * TCP path, fed in chunks); accepted messages are fully read, re-serialized and parsed again, and
 * requests are answered with createResponse, as the transport and user agent would. Parse
 * failures are values; any exception is a finding.
 */
import { parseMessage, SipStreamFramer, type ParseOutcome } from '../../../src/engine/sip/messages/parse.js';
import { serializeMessage } from '../../../src/engine/sip/messages/serialize.js';
import { createResponse } from '../../../src/engine/sip/messages/response.js';
import type { SipMessage, SipRequest } from '../../../src/engine/sip/messages/sip-message.js';

/** What happened to inputs, summed over a run. */
export interface FuzzTally {
  accepted: number;
  answered: number;
  dropped: number;
  streamMessages: number;
  streamFailures: number;
}

export const emptyTally = (): FuzzTally => ({ accepted: 0, answered: 0, dropped: 0, streamMessages: 0, streamFailures: 0 });

/** The stream framer's size cap, as the transport layer configures it by default. */
export const MAX_MESSAGE_SIZE = 65_535;

/** Everything a layer above may read on an accepted message; the round trip must parse again. */
function useAccepted(m: SipMessage): void {
  void [m.callId, m.cseq, m.from, m.to, m.topVia, m.vias, m.maxForwards, m.contacts];
  for (const name of new Set([...m.headers.entries()].map(([n]) => n))) m.headers.getAll(name);
  const wire = serializeMessage(m);
  const again = parseMessage(wire);
  if (!again.ok) throw new Error(`accepted message does not parse after serialization (${again.error.reason}):\n${wire.toString('latin1').slice(0, 600)}`);
  if (m.kind === 'request') {
    // RFC 3261 8.2.6: a UAS answers an accepted request; that answer must itself be well formed.
    const response = serializeMessage(createResponse(m, 200, undefined, { toTag: 'fuzz' }));
    const parsed = parseMessage(response);
    if (!parsed.ok) throw new Error(`response to an accepted request does not parse (${parsed.error.reason}):\n${response.toString('latin1').slice(0, 600)}`);
  }
}

/** RFC 3261 21.4.1: what the transport sends back for an answerable malformed request. */
function answerMalformed(request: SipRequest, status: number, reason: string): void {
  if (request.method === 'ACK') return;
  serializeMessage(createResponse(request, status, `Bad Request (${reason})`.replace(/[\r\n]/g, ' ')));
}

function onOutcome(outcome: ParseOutcome, tally: FuzzTally): void {
  if (outcome.ok) {
    tally.accepted++;
    useAccepted(outcome.message);
  } else if (outcome.request) {
    tally.answered++;
    if (!(outcome.error.status >= 400 && outcome.error.status < 600)) throw new Error(`parse failure with status ${outcome.error.status}`);
    answerMalformed(outcome.request, outcome.error.status, outcome.error.reason);
  } else {
    tally.dropped++;
  }
}

/** The UDP path: one datagram (the transport drops one over the size limit unread, so no parse). */
export function checkDatagram(input: Buffer, tally: FuzzTally): void {
  if (input.length > MAX_MESSAGE_SIZE) return;
  onOutcome(parseMessage(input), tally);
}

/** The TCP path: the input as a stream in the given chunk sizes (cycled). */
export function checkStream(input: Buffer, chunks: readonly number[], tally: FuzzTally): void {
  const framer = new SipStreamFramer({
    maxMessageSize: MAX_MESSAGE_SIZE,
    onMessage: (outcome) => {
      tally.streamMessages++;
      onOutcome(outcome, tally);
    },
    onError: (error, request) => {
      tally.streamFailures++;
      if (request) answerMalformed(request, error.status, error.reason);
    },
  });
  for (let i = 0, c = 0; i < input.length; c++) {
    const n = chunks[c % chunks.length] ?? 1;
    framer.push(input.subarray(i, i + n));
    i += n;
    // The framer holds at most one incomplete message of bounded size (RFC 3261 18.3 framing).
    if (framer.buffered > MAX_MESSAGE_SIZE) throw new Error(`framer buffers ${framer.buffered} octets`);
  }
}
