import t from 'tap';
import { parse } from 'sdp-transform';
import { CODECS } from './codecs.js';
import { answerDirection, createAnswer, createOffer, processAnswer, type LocalCapabilities } from './offer-answer.js';
import { readRemoteDescription, type Direction, type RemoteDescription } from './sdp-description.js';

const local: LocalCapabilities = {
  address: '127.0.0.1',
  port: 40000,
  codecs: [CODECS.PCMU, CODECS.PCMA, CODECS.TELEPHONE_EVENT],
  sessionId: 1234,
  sessionVersion: 1,
};

const sdp = (lines: string[]): string => [...lines, ''].join('\r\n');
const offer = (media: string[], session: string[] = ['c=IN IP4 192.0.2.10']): string =>
  sdp(['v=0', 'o=- 1 1 IN IP4 192.0.2.10', 's=-', ...session, 't=0 0', ...media]);
const sippOffer = offer(['m=audio 6000 RTP/AVP 8 101', 'a=rtpmap:8 PCMA/8000', 'a=rtpmap:101 telephone-event/8000', 'a=fmtp:101 0-11,16']);

const remote = (text: string): RemoteDescription => {
  const r = readRemoteDescription(text);
  if ('error' in r) throw new Error(r.detail);
  return r;
};

t.test('RFC 3264 6.1: answer direction mirrors the offer, narrowed by ours', (t) => {
  const table: [Direction, Direction, Direction][] = [
    ['sendrecv', 'sendrecv', 'sendrecv'],
    ['sendonly', 'sendrecv', 'recvonly'],
    ['recvonly', 'sendrecv', 'sendonly'],
    ['inactive', 'sendrecv', 'inactive'],
    ['sendrecv', 'sendonly', 'sendonly'],
    ['sendrecv', 'recvonly', 'recvonly'],
    ['sendrecv', 'inactive', 'inactive'],
    ['sendonly', 'sendonly', 'inactive'],
    ['recvonly', 'recvonly', 'inactive'],
  ];
  for (const [offered, wanted, answered] of table) t.equal(answerDirection(offered, wanted), answered, `${offered} offered, ${wanted} wanted`);
  t.end();
});

t.test('RFC 3264 8.4: hold is recognised from sendonly, inactive or c=0.0.0.0', (t) => {
  const table: [string, string[], string[], boolean][] = [
    ['sendrecv', ['c=IN IP4 192.0.2.10'], [], false],
    ['sendonly attribute', ['c=IN IP4 192.0.2.10'], ['a=sendonly'], true],
    ['inactive attribute', ['c=IN IP4 192.0.2.10'], ['a=inactive'], true],
    ['recvonly is not hold', ['c=IN IP4 192.0.2.10'], ['a=recvonly'], false],
    ['RFC 2543 zero address', ['c=IN IP4 0.0.0.0'], [], true],
    ['session-level sendonly', ['c=IN IP4 192.0.2.10', 'a=sendonly'], [], true],
  ];
  for (const [name, session, attrs, onHold] of table) {
    t.equal(remote(offer(['m=audio 6000 RTP/AVP 0', ...attrs], session)).audio.onHold, onHold, name);
  }
  t.end();
});

t.test('RFC 3264 8.4: an offer at c=0.0.0.0 receives nothing, so the answer sends nothing (recvonly, or inactive)', (t) => {
  const table: [string, string[], Direction][] = [
    ['sendrecv at 0.0.0.0 is hold', [], 'recvonly'],
    ['sendonly at 0.0.0.0', ['a=sendonly'], 'recvonly'],
    ['recvonly at 0.0.0.0 asks for nothing', ['a=recvonly'], 'inactive'],
    ['inactive at 0.0.0.0', ['a=inactive'], 'inactive'],
  ];
  for (const [name, attrs, answered] of table) {
    const answer = createAnswer(offer(['m=audio 6000 RTP/AVP 0', ...attrs], ['c=IN IP4 0.0.0.0']), local);
    if ('error' in answer) throw new Error(answer.detail);
    t.equal(parse(answer.sdp).media[0]!.direction, answered, `${name}: answered ${answered}`);
    t.equal(answer.negotiated.direction, answered, 'and that is the direction the media is wired with');
    t.equal(answer.negotiated.remote.onHold, true);
  }
  t.end();
});

t.test('RFC 4566 5.7: media-level c= overrides the session-level one', (t) => {
  const r = remote(offer(['m=audio 6000 RTP/AVP 0', 'c=IN IP4 198.51.100.7']));
  t.same(r.audio.rtp, { address: '198.51.100.7', port: 6000 });
  const noC = readRemoteDescription(offer(['m=audio 6000 RTP/AVP 0'], []));
  t.match(noC, { error: 'malformed-sdp', status: 400 });
  t.end();
});

t.test('RFC 3605 and RFC 5761: RTCP address from a=rtcp, port+1 by default, RTP port with rtcp-mux', (t) => {
  t.same(remote(offer(['m=audio 6000 RTP/AVP 0'])).audio.rtcp, { address: '192.0.2.10', port: 6001 });
  t.same(remote(offer(['m=audio 6000 RTP/AVP 0', 'a=rtcp:7001 IN IP4 192.0.2.99'])).audio.rtcp, { address: '192.0.2.99', port: 7001 });
  const mux = remote(offer(['m=audio 6000 RTP/AVP 0', 'a=rtcp-mux']));
  t.equal(mux.audio.rtcpMux, true);
  t.same(mux.audio.rtcp, { address: '192.0.2.10', port: 6000 });
  t.end();
});

t.test('RFC 3264 6.1: codec negotiation table', (t) => {
  const table: { name: string; media: string[]; codec: string | null; pt?: number; event?: number | null; ptime?: number }[] = [
    { name: 'sipp uac_pcap offer: PCMA + telephone-event', media: ['m=audio 6000 RTP/AVP 8 101', 'a=rtpmap:101 telephone-event/8000'], codec: 'PCMA', pt: 8, event: 101 },
    { name: 'static types without rtpmap', media: ['m=audio 6000 RTP/AVP 0 8'], codec: 'PCMU', pt: 0, event: null },
    { name: 'offerer preference wins', media: ['m=audio 6000 RTP/AVP 8 0'], codec: 'PCMA', pt: 8 },
    { name: 'dynamic telephone-event number kept', media: ['m=audio 6000 RTP/AVP 0 96', 'a=rtpmap:96 telephone-event/8000'], codec: 'PCMU', event: 96 },
    { name: 'unknown codecs skipped', media: ['m=audio 6000 RTP/AVP 18 111 0', 'a=rtpmap:111 opus/48000/2'], codec: 'PCMU' },
    { name: 'telephone-event at another rate ignored', media: ['m=audio 6000 RTP/AVP 0 97', 'a=rtpmap:97 telephone-event/48000'], codec: 'PCMU', event: null },
    { name: 'ptime taken from the offer', media: ['m=audio 6000 RTP/AVP 0', 'a=ptime:30'], codec: 'PCMU', ptime: 30 },
    { name: 'G.729 only: no common codec', media: ['m=audio 6000 RTP/AVP 18'], codec: null },
    { name: 'only telephone-event: no common codec', media: ['m=audio 6000 RTP/AVP 101', 'a=rtpmap:101 telephone-event/8000'], codec: null },
  ];
  for (const row of table) {
    const answer = createAnswer(offer(row.media), local);
    if (row.codec === null) {
      t.match(answer, { error: 'no-common-codec', status: 488 }, row.name);
      continue;
    }
    if ('error' in answer) {
      t.fail(row.name);
      continue;
    }
    t.equal(answer.negotiated.codec.encoding, row.codec, row.name);
    if (row.pt !== undefined) t.equal(answer.negotiated.codec.payloadType, row.pt, `${row.name}: payload type`);
    if (row.event !== undefined) t.equal(answer.negotiated.telephoneEvent?.payloadType ?? null, row.event, `${row.name}: telephone-event`);
    if (row.ptime !== undefined) t.equal(answer.negotiated.ptime, row.ptime, `${row.name}: ptime`);
  }
  t.end();
});

t.test('RFC 3264 6: the answer lists the chosen codec with the offer numbers and our address', (t) => {
  const answer = createAnswer(sippOffer, local);
  if ('error' in answer) return t.fail(answer.detail);
  const parsed = parse(answer.sdp);
  const m = parsed.media[0]!;
  t.equal(parsed.connection?.ip, '127.0.0.1');
  t.equal(m.port, 40000);
  t.equal(m.payloads, '8 101');
  t.same(m.rtp.map((r) => `${r.payload} ${r.codec}/${r.rate}`), ['8 PCMA/8000', '101 telephone-event/8000']);
  t.same(m.fmtp, [{ payload: 101, config: '0-11,16' }], 'the offer fmtp is echoed');
  t.equal(m.direction, 'sendrecv');
  t.equal(m.ptime, 20);
  t.equal(m.rtcp?.port, 40001);
  t.equal(answer.negotiated.receivePayloadType, 8);
  t.end();
});

t.test('RFC 3264 6: other streams are declined with port 0, in order', (t) => {
  const text = offer(['m=video 5000 RTP/AVP 96', 'a=rtpmap:96 H264/90000', 'm=audio 6000 RTP/AVP 0']);
  const answer = createAnswer(text, local);
  if ('error' in answer) return t.fail(answer.detail);
  const media = parse(answer.sdp).media;
  t.same(media.map((m) => [m.type, m.port]), [['video', 0], ['audio', 40000]]);
  t.match(createAnswer(offer(['m=video 5000 RTP/AVP 96']), local), { error: 'no-audio', status: 488 });
  t.match(createAnswer('garbage', local), { error: 'malformed-sdp' });
  t.end();
});

t.test('RFC 3264 6: without media encryption only plain RTP/AVP audio is answered; SRTP and other profiles are declined', (t) => {
  const srtp = ['m=audio 7000 RTP/SAVP 0', 'a=rtpmap:0 PCMU/8000', 'a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz'];
  t.match(createAnswer(offer(srtp), local), { error: 'no-audio', status: 488, detail: /RTP\/SAVP is not accepted here/ }, 'SRTP alone is a 488, not an RTP/AVP answer');
  t.match(createAnswer(offer(['m=audio 7000 UDP/TLS/RTP/SAVPF 0']), local), { error: 'no-audio', status: 488 }, 'nor WebRTC DTLS-SRTP');
  // Best-effort SRTP offered as two streams: the plain one is taken, the SRTP one declined in place.
  const both = createAnswer(offer([...srtp, 'm=audio 6000 RTP/AVP 0']), local);
  if ('error' in both) return t.fail(both.detail);
  t.same(parse(both.sdp).media.map((m) => [m.protocol, m.port]), [['RTP/SAVP', 0], ['RTP/AVP', 40000]]);
  t.equal(both.negotiated.remote.rtp.port, 6000, 'media goes to the RTP/AVP stream');
  t.match(processAnswer(offer(srtp), local), { error: 'no-audio' }, 'an SRTP answer to our RTP/AVP offer is refused too');
  t.end();
});

t.test('RFC 3264 8.4: an answer to a hold offer is recvonly; our own hold offer is sendonly', (t) => {
  const held = createAnswer(offer(['m=audio 6000 RTP/AVP 0', 'a=sendonly']), local);
  if ('error' in held) return t.fail(held.detail);
  t.equal(parse(held.sdp).media[0]!.direction, 'recvonly');
  t.equal(held.negotiated.remote.onHold, true);
  t.equal(parse(createOffer({ ...local, direction: 'sendonly', sessionVersion: 2 })).media[0]!.direction, 'sendonly');
  t.end();
});

t.test('RFC 3264 5 and 7: an offer lists all our codecs; the answer fixes payload types both ways', (t) => {
  const ours = parse(createOffer({ ...local, rtcpMux: true }));
  const m = ours.media[0]!;
  t.equal(m.payloads, '0 8 101');
  t.equal(m.rtcpMux, 'rtcp-mux');
  t.equal(m.rtcp?.port, 40000, 'RFC 5761 5.1.3: a=rtcp names the RTP port with mux');
  t.equal(ours.origin.sessionVersion, 1);
  // sipp's uas answers PCMU only; a far end may also renumber telephone-event.
  const answer = sdp(['v=0', 'o=- 2 2 IN IP4 192.0.2.20', 's=-', 'c=IN IP4 192.0.2.20', 't=0 0', 'm=audio 7000 RTP/AVP 0 100', 'a=rtpmap:100 telephone-event/8000', 'a=rtcp-mux']);
  const negotiated = processAnswer(answer, { ...local, rtcpMux: true });
  if ('error' in negotiated) return t.fail(negotiated.detail);
  t.equal(negotiated.codec.encoding, 'PCMU');
  t.equal(negotiated.telephoneEvent?.payloadType, 100, 'we send events with their number');
  t.equal(negotiated.receiveTelephoneEventPayloadType, 101, 'and receive them with ours');
  t.equal(negotiated.rtcpMux, true);
  t.equal(negotiated.direction, 'sendrecv');
  const recvonly = processAnswer(answer.replace('a=rtcp-mux', 'a=recvonly'), local);
  t.equal('error' in recvonly ? null : recvonly.direction, 'sendonly', 'answer recvonly: we only send');
  t.end();
});

t.test('G.722 is negotiated at its RFC 3551 RTP clock of 8000', (t) => {
  const answer = createAnswer(offer(['m=audio 6000 RTP/AVP 9 0']), { ...local, codecs: [CODECS.G722, CODECS.PCMU] });
  if ('error' in answer) return t.fail(answer.detail);
  t.match(answer.negotiated.codec, { encoding: 'G722', payloadType: 9, clockRate: 8000 });
  t.end();
});
