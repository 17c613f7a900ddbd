/**
 * @module A test-only SIP signalling shim for media interop: just enough RFC 3261 over UDP to
 * accept one call from a sipp UAC and place one call to a sipp UAS, so the media bridge under test
 * can sit between them. It is not the product's SIP stack and handles one dialog per side.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { randomBytes } from 'node:crypto';

/** A parsed SIP message: start line, headers by lower-case name, body. */
export interface SipMessage {
  startLine: string;
  headers: Map<string, string[]>;
  body: string;
}

export function parseSip(text: string): SipMessage {
  const split = text.indexOf('\r\n\r\n');
  const head = split < 0 ? text : text.slice(0, split);
  const body = split < 0 ? '' : text.slice(split + 4);
  const [startLine = '', ...lines] = head.split('\r\n');
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  return { startLine, headers, body };
}

const header = (m: SipMessage, name: string): string => m.headers.get(name)?.[0] ?? '';
const token = (): string => randomBytes(6).toString('hex');

/** What the test does when the caller's INVITE arrives: set up media and return the answer SDP. */
export type InviteHandler = (offerSdp: string) => Promise<string>;

interface Dialog {
  farPort: number;
  callId: string;
  fromTag: string;
  toHeader: string;
  cseq: number;
}

/** One UDP socket acting as UAS towards the caller and UAC towards the far end. */
export class SipShim {
  readonly #socket: Socket;
  #onInvite: InviteHandler = () => Promise.reject(new Error('no INVITE handler'));
  #onBye: () => void = () => undefined;
  #answered = new Map<string, string>();
  #pending = new Map<string, (m: SipMessage) => void>();
  #far: Dialog | null = null;
  readonly errors: Error[] = [];

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('message', (msg, rinfo) => this.#onMessage(parseSip(msg.toString('utf8')), rinfo));
  }

  static async open(t: { teardown(fn: () => void): void }): Promise<SipShim> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    t.teardown(() => socket.close());
    return new SipShim(socket);
  }

  get port(): number {
    return this.#socket.address().port;
  }

  handleInvite(handler: InviteHandler, onBye: () => void): void {
    this.#onInvite = handler;
    this.#onBye = onBye;
  }

  /** INVITEs the far-end UAS with `sdp`; resolves with its 200 OK body after sending the ACK. */
  async invite(farPort: number, sdp: string): Promise<string> {
    const dialog: Dialog = { farPort, callId: `${token()}@127.0.0.1`, fromTag: token(), toHeader: `<sip:echo@127.0.0.1:${farPort}>`, cseq: 1 };
    this.#far = dialog;
    const ok = await this.#request(dialog, 'INVITE', sdp);
    dialog.toHeader = header(ok, 'to');
    this.#send(farPort, this.#requestText(dialog, 'ACK', 1, ''));
    return ok.body;
  }

  /** Ends the far-end call with BYE and waits for its 200. */
  async bye(): Promise<void> {
    if (!this.#far) return;
    this.#far.cseq++;
    await this.#request(this.#far, 'BYE', '');
  }

  #request(dialog: Dialog, method: string, body: string): Promise<SipMessage> {
    const text = this.#requestText(dialog, method, dialog.cseq, body);
    return new Promise((resolve, reject) => {
      // RFC 3261 17.1.1.2 Timer A, simplified: retransmit every 500 ms until a final response.
      const retransmit = setInterval(() => this.#send(dialog.farPort, text), 500);
      const giveUp = setTimeout(() => finish(null), 10_000);
      const finish = (m: SipMessage | null): void => {
        clearInterval(retransmit);
        clearTimeout(giveUp);
        this.#pending.delete(`${dialog.cseq} ${method}`);
        if (m) resolve(m);
        else reject(new Error(`${method}: no final response`));
      };
      this.#pending.set(`${dialog.cseq} ${method}`, (m) => finish(m));
      this.#send(dialog.farPort, text);
    });
  }

  #requestText(d: Dialog, method: string, cseq: number, body: string): string {
    const lines = [
      `${method} sip:echo@127.0.0.1:${d.farPort} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${this.port};branch=z9hG4bK${token()}`,
      `From: <sip:bridge@127.0.0.1:${this.port}>;tag=${d.fromTag}`,
      `To: ${d.toHeader}`,
      `Call-ID: ${d.callId}`,
      `CSeq: ${cseq} ${method}`,
      `Contact: <sip:bridge@127.0.0.1:${this.port}>`,
      'Max-Forwards: 70',
    ];
    if (body) lines.push('Content-Type: application/sdp');
    return [...lines, `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n');
  }

  #onMessage(m: SipMessage, rinfo: RemoteInfo): void {
    if (m.startLine.startsWith('SIP/2.0 ')) {
      const status = Number(m.startLine.split(' ')[1]);
      if (status >= 200) this.#pending.get(header(m, 'cseq'))?.(m);
      return;
    }
    const method = m.startLine.split(' ')[0];
    if (method === 'INVITE') this.#onCallerInvite(m, rinfo);
    else if (method === 'BYE') {
      this.#send(rinfo.port, this.#response(m, 200, 'OK', ''));
      this.#onBye();
    }
  }

  #onCallerInvite(m: SipMessage, rinfo: RemoteInfo): void {
    const callId = header(m, 'call-id');
    const previous = this.#answered.get(callId);
    if (previous !== undefined) {
      if (previous) this.#send(rinfo.port, previous);
      return;
    }
    this.#answered.set(callId, '');
    this.#send(rinfo.port, this.#response(m, 100, 'Trying', ''));
    this.#onInvite(m.body).then(
      (sdp) => {
        const ok = this.#response(m, 200, 'OK', sdp);
        this.#answered.set(callId, ok);
        this.#send(rinfo.port, ok);
      },
      (err: Error) => {
        this.errors.push(err);
        this.#send(rinfo.port, this.#response(m, 500, 'Server Internal Error', ''));
      },
    );
  }

  #response(req: SipMessage, status: number, reason: string, body: string): string {
    const to = header(req, 'to');
    const lines = [
      `SIP/2.0 ${status} ${reason}`,
      ...(req.headers.get('via') ?? []).map((v) => `Via: ${v}`),
      `From: ${header(req, 'from')}`,
      `To: ${to.includes(';tag=') || status === 100 ? to : `${to};tag=shim${token()}`}`,
      `Call-ID: ${header(req, 'call-id')}`,
      `CSeq: ${header(req, 'cseq')}`,
      `Contact: <sip:bridge@127.0.0.1:${this.port}>`,
    ];
    if (body) lines.push('Content-Type: application/sdp');
    return [...lines, `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n');
  }

  #send(port: number, text: string): void {
    this.#socket.send(text, port, '127.0.0.1');
  }
}
