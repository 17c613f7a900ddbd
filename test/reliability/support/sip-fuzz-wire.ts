/**
 * @module Fuzz inputs over real sockets to a running SIP user agent: what answers each input
 * should get from the transport (RFC 3261 21.4.1: a malformed but answerable request gets 400, or
 * 505 for another version, sent back to the packet's source), a UDP client that collects status
 * lines, a TCP client that sends one input per connection, and an OPTIONS probe.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect } from 'node:net';
import { parseMessage, SipStreamFramer, type ParseOutcome } from '../../../src/engine/sip/messages/parse.js';
import { MAX_MESSAGE_SIZE } from './sip-fuzz-check.js';

/** The status line the transport layer sends for a malformed request, or undefined when none is due. */
function answerLine(outcome: ParseOutcome): string | undefined {
  if (outcome.ok || !outcome.request || outcome.request.method === 'ACK') return undefined;
  const { status, reason } = outcome.error;
  // The transport quotes at most 120 characters of the detail (transport-layer.ts).
  const detail = reason.length > 120 ? `${reason.slice(0, 120)}...` : reason;
  return status === 400 ? `SIP/2.0 400 ${`Bad Request (${detail})`.replace(/[\r\n]/g, ' ')}` : `SIP/2.0 ${status} `;
}

/** Answers due for `input` sent as one datagram. */
export function expectedOverUdp(input: Buffer): string[] {
  const line = answerLine(parseMessage(input));
  return line === undefined ? [] : [line];
}

/** Answers due for `input` written to a fresh TCP connection. */
export function expectedOverTcp(input: Buffer): string[] {
  const out: string[] = [];
  const framer = new SipStreamFramer({
    maxMessageSize: MAX_MESSAGE_SIZE,
    onMessage: (outcome) => {
      const line = answerLine(outcome);
      if (line !== undefined) out.push(line);
    },
    onError: (error, request) => {
      if (request && request.method !== 'ACK') out.push(`SIP/2.0 ${error.status} `);
    },
  });
  framer.push(input);
  return out;
}

/** Status lines found in received bytes. */
export function statusLines(data: string): string[] {
  return [...data.matchAll(/^SIP\/2\.0 [0-9]{3} [^\r\n]*/gm)].map((m) => m[0]);
}

/** Whether every expected line (a full line, or a "SIP/2.0 NNN " prefix) is among `got`, counting repeats. */
export function missingAnswers(expected: readonly string[], got: readonly string[]): string[] {
  const pool = [...got];
  const missing: string[] = [];
  for (const e of expected) {
    const i = pool.findIndex((g) => (e.endsWith(' ') ? g.startsWith(e) : g === e));
    if (i < 0) missing.push(e);
    else pool.splice(i, 1);
  }
  return missing;
}

/** An OPTIONS request (RFC 3261 11) from `port` over `transport`, with its own Call-ID. */
export function optionsRequest(transport: 'UDP' | 'TCP', port: number, callId: string): Buffer {
  return Buffer.from([
    'OPTIONS sip:gw@127.0.0.1 SIP/2.0', `Via: SIP/2.0/${transport} 127.0.0.1:${port};branch=z9hG4bK-${callId};rport`,
    'From: <sip:probe@127.0.0.1>;tag=probe', 'To: <sip:gw@127.0.0.1>', `Call-ID: ${callId}`, 'CSeq: 1 OPTIONS',
    'Max-Forwards: 70', 'Content-Length: 0', '', '',
  ].join('\r\n'));
}

/** A UDP client on 127.0.0.1 that keeps every datagram it receives. */
export class UdpProbe {
  readonly socket: UdpSocket = createSocket('udp4');
  readonly received: string[] = [];

  async open(): Promise<number> {
    this.socket.on('message', (m) => this.received.push(m.toString('utf8')));
    await new Promise<void>((resolve) => this.socket.bind(0, '127.0.0.1', resolve));
    return this.socket.address().port;
  }

  send(data: Buffer, port: number): Promise<void> {
    return new Promise((resolve, reject) => this.socket.send(data, port, '127.0.0.1', (err) => (err ? reject(err) : resolve())));
  }

  close(): void {
    this.socket.close();
  }
}

/**
 * Writes `input` on a new TCP connection and collects what comes back until `until` holds, the
 * server closes, or `ms` pass; then closes the connection.
 */
export function tcpExchange(port: number, input: Buffer, until: (received: string) => boolean, ms = 3000): Promise<string> {
  return new Promise((resolve) => {
    let received = '';
    const socket = connect(port, '127.0.0.1');
    const finish = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(received);
    };
    const timer = setTimeout(finish, ms);
    socket.on('connect', () => socket.write(input, () => { if (until(received)) finish(); }));
    socket.on('data', (d: Buffer) => {
      received += d.toString('utf8');
      if (until(received)) finish();
    });
    socket.on('error', finish);
    socket.on('close', finish);
  });
}
