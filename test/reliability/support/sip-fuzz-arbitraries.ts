/**
 * @module fast-check arbitraries for SIP parser fuzzing: (a) seed messages with edits (byte flips,
 * token inserts, truncations, duplicated headers, very long values, deep nesting, huge numbers)
 * and (b) messages generated from a small SIP grammar (RFC 3261 25) with compact header names,
 * parameters, and bodies with a right, wrong or missing Content-Length.
 */
import fc from 'fast-check';

/** Separators and troublemakers of the RFC 3261 25.1 grammar, plus NUL, 0xFF and huge numbers. */
export const TOKENS = [
  ';', ',', '"', '<', '>', '\\', '\r\n', '\r\n ', '\r\n\r\n', ' ', '\t', ':', '=', '@', '[', ']', '%', '%00', '%ZZ',
  '\x00', '\xff', 'SIP/2.0', 'sip:', '99999999999999999999', '4294967296', '-1', '1e999', 'NaN', '\u00e9',
];

type Edit =
  | { kind: 'flip'; at: number; byte: number }
  | { kind: 'insert'; at: number; token: string }
  | { kind: 'truncate'; at: number }
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'duplicate'; line: number; times: number }
  | { kind: 'long'; line: number; size: number; fill: string }
  | { kind: 'nest'; at: number; open: string; close: string; depth: number }
  | { kind: 'number'; at: number; value: string };

const position = fc.nat({ max: 0xffff });
const NESTS: readonly (readonly [string, string])[] = [['<', '>'], ['"', '"'], ['(', ')'], ['[', ']'], ['\\"', ''], ['<sip:', '>'], [';a=', '']];

const editArb: fc.Arbitrary<Edit> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('flip' as const), at: position, byte: fc.nat({ max: 255 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('insert' as const), at: position, token: fc.constantFrom(...TOKENS) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: position }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), at: position, length: fc.integer({ min: 1, max: 40 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('duplicate' as const), line: fc.nat({ max: 40 }), times: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 3 }) }, { weight: 1, arbitrary: fc.integer({ min: 50, max: 500 }) }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('long' as const), line: fc.nat({ max: 40 }), size: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 200, max: 2000 }) }, { weight: 1, arbitrary: fc.integer({ min: 8000, max: 70_000 }) }), fill: fc.constantFrom('a', ';a', ',', ' ', '%41', '"') }) },
  { weight: 1, arbitrary: fc.constantFrom(...NESTS).chain(([open, close]) => fc.record({ kind: fc.constant('nest' as const), at: position, open: fc.constant(open), close: fc.constant(close), depth: fc.integer({ min: 10, max: 5000 }) })) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('number' as const), at: position, value: fc.constantFrom('99999999999999999999', '4294967296', '2147483648', '-1', '0', '00000000000000000001', '1.5', '0x10') }) },
);

function lineBounds(b: Buffer, line: number): [number, number] | undefined {
  let start = 0;
  for (let i = 0; i < line; i++) {
    const next = b.indexOf('\r\n', start);
    if (next < 0) return undefined;
    start = next + 2;
  }
  const end = b.indexOf('\r\n', start);
  return end < 0 ? undefined : [start, end + 2];
}

const splice = (b: Buffer, at: number, remove: number, insert: Buffer): Buffer => Buffer.concat([b.subarray(0, at), insert, b.subarray(at + remove)]);

/**
 * Inputs are cut a little above the 65,535-octet message limit: the transport drops larger
 * datagrams unread and the stream framer refuses larger messages, so longer inputs only cost time.
 */
export const MAX_INPUT = 70_000;

function applyEdit(b: Buffer, e: Edit): Buffer {
  const out = editOnce(b, e);
  return out.length > MAX_INPUT ? out.subarray(0, MAX_INPUT) : out;
}

function editOnce(b: Buffer, e: Edit): Buffer {
  const at = 'at' in e ? e.at % (b.length + 1) : 0;
  switch (e.kind) {
    case 'flip': {
      const copy = Buffer.from(b);
      if (at < copy.length) copy[at] = e.byte;
      return copy;
    }
    case 'insert': return splice(b, at, 0, Buffer.from(e.token, 'latin1'));
    case 'truncate': return b.subarray(0, at);
    case 'delete': return splice(b, at, e.length, Buffer.alloc(0));
    case 'duplicate': {
      const bounds = lineBounds(b, 1 + e.line);
      if (!bounds) return b;
      const line = b.subarray(bounds[0], bounds[1]);
      const times = Math.min(e.times, Math.ceil(MAX_INPUT / line.length));
      return splice(b, bounds[1], 0, Buffer.concat(Array.from({ length: times }, () => line)));
    }
    case 'long': {
      const bounds = lineBounds(b, 1 + e.line);
      if (!bounds) return b;
      return splice(b, bounds[1] - 2, 0, Buffer.from(e.fill.repeat(Math.ceil(e.size / e.fill.length)), 'latin1'));
    }
    case 'nest': return splice(b, at, 0, Buffer.from(e.open.repeat(e.depth) + e.close.repeat(e.depth), 'latin1'));
    case 'number': {
      // Replace the digit run at or after `at` (CSeq, Content-Length, Max-Forwards, ports, status codes).
      let i = at;
      while (i < b.length && !(b[i]! >= 0x30 && b[i]! <= 0x39)) i++;
      let j = i;
      while (j < b.length && b[j]! >= 0x30 && b[j]! <= 0x39) j++;
      return i < b.length ? splice(b, i, j - i, Buffer.from(e.value, 'latin1')) : b;
    }
  }
}

/** A seed with one to six edits applied in order. */
export function mutatedSeed(seeds: readonly Buffer[]): fc.Arbitrary<Buffer> {
  return fc.tuple(fc.nat({ max: seeds.length - 1 }), fc.array(editArb, { minLength: 1, maxLength: 6 }))
    .map(([index, edits]) => edits.reduce(applyEdit, seeds[index]!));
}

// ---- (b) messages from a small grammar (RFC 3261 25.1) ----

/** Mostly `good`, sometimes `bad`: generated messages should often be accepted, so the round trip runs. */
const mostly = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<T>): fc.Arbitrary<T> => fc.oneof({ weight: 15, arbitrary: good }, { weight: 1, arbitrary: bad });

const tokenChars = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCZ0123456789-.!%*_+`\'~'.split(''));
const token = fc.string({ unit: tokenChars, minLength: 1, maxLength: 12 });
const wild = fc.string({ unit: fc.constantFrom(...'ab1 ;,"<>\\:=@[]%\t/?&.'.split('')), maxLength: 16 });
const word = mostly(token, wild);
const host = mostly(
  fc.oneof(fc.constantFrom('127.0.0.1', 'example.com', '[::1]', '[2001:db8::10]', '[::ffff:192.0.2.1]'), fc.tuple(fc.nat(255), fc.nat(255)).map(([a, b]) => `10.${a}.${b}.1`), fc.stringMatching(/^[a-z][a-z0-9-]{0,10}\.example\.org$/)),
  fc.constantFrom('[2001:db8::10', 'a..b', '256.1.1.1', '', '[]', '::1', '-x-.com'),
);
const port = mostly(fc.oneof(fc.constant(''), fc.integer({ min: 1, max: 65535 }).map((p) => `:${p}`)), fc.constantFrom(':', ':x', ':0', ':99999', ':99999999999999999999'));
const param = fc.tuple(token, fc.oneof(fc.constant(undefined), word, fc.constant('"quoted;value"'))).map(([n, v]) => (v === undefined ? `;${n}` : `;${n}=${v}`));
const params = fc.array(param, { maxLength: 4 }).map((p) => p.join(''));
/** uri-parameter (RFC 3261 25.1): unreserved characters only, no quoted strings. */
const uriToken = mostly(fc.stringMatching(/^[a-zA-Z0-9\-_.!~*'+]{1,10}$/), word);
const uriParams = fc.array(fc.tuple(uriToken, fc.option(uriToken)).map(([n, v]) => (v === null ? `;${n}` : `;${n}=${v}`)), { maxLength: 3 }).map((p) => p.join(''));
const user = fc.option(mostly(fc.stringMatching(/^[+a-z0-9.-]{1,12}$/), wild));
const uri = fc.tuple(mostly(fc.constantFrom('sip', 'sips'), fc.constantFrom('tel', 'urn', 'SIP', 'http', '')), user, host, port, uriParams, fc.oneof({ weight: 12, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom('?a=b', '?Route=%3Csip:x%3E', '?') }))
  .map(([scheme, u, h, p, ps, hdrs]) => `${scheme}:${u === null ? '' : `${u}@`}${h}${p}${ps}${hdrs}`);
const display = fc.oneof(fc.constant(''), token.map((d) => `${d} `), word.map((d) => `"${d.replace(/["\\]/g, '')}" `), wild.map((d) => `"${d}" `));
const nameAddr = fc.tuple(display, uri, fc.boolean(), params).map(([d, u, angle, ps]) => (angle || d !== '' ? `${d}<${u}>${ps}` : `${u}${ps}`));
const via = fc.tuple(mostly(fc.constantFrom('SIP/2.0/UDP', 'SIP/2.0/TCP', 'SIP/2.0/TLS', 'SIP / 2.0 / UDP'), fc.constantFrom('SIP/3.0/UDP', 'SIP/2.0', 'SIP/2.0/')), host, port, mostly(fc.constantFrom(';branch=z9hG4bK776asdhds', ';branch=z9hG4bKx;rport', ';rport;branch=z9hG4bK1'), fc.constantFrom(';branch=', ';received=::1', ';rport=x', '')), params)
  .map(([proto, h, p, b, ps]) => `${proto} ${h}${p}${b}${ps}`);
const number = mostly(fc.nat(255).map(String), fc.constantFrom('99999999999999999999', '4294967296', '256', '-1', '', ' 7 ', '0x1'));

const method: fc.Arbitrary<string> = mostly(fc.constantFrom('INVITE', 'ACK', 'BYE', 'CANCEL', 'OPTIONS', 'REGISTER', 'INFO', 'UPDATE', 'REFER', 'NOTIFY', 'PRACK', 'SUBSCRIBE', 'MESSAGE'), word);

/** One header field: its name in long or compact form (RFC 3261 7.3.3), a separator, a value. */
const field = (names: string[], value: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.tuple(fc.constantFrom(...names), mostly(fc.constantFrom(': ', ':'), fc.constantFrom(' :  ', ':\r\n ', '\t:')), value).map(([n, sep, v]) => `${n}${sep}${v}`);

/** Stands for the request's own method in CSeq until the message is assembled. */
const SAME_METHOD = '\u0000same';
const often = (a: fc.Arbitrary<string>): fc.Arbitrary<string> => fc.option(a, { freq: 60 }).map((x) => x ?? '');

/** The fields RFC 3261 8.1.1 requires, each present most of the time. */
const requiredFields = fc.tuple(
  often(field(['Via', 'v'], fc.array(via, { minLength: 1, maxLength: 3 }).map((v) => v.join(', ')))),
  often(field(['From', 'f'], nameAddr.map((a) => `${a};tag=from1`))),
  often(field(['To', 't'], nameAddr)),
  often(field(['Call-ID', 'i'], mostly(fc.stringMatching(/^[a-z0-9]{4,16}(@[a-z0-9.]{1,12})?$/), word))),
  often(field(['CSeq'], fc.tuple(number, mostly(fc.constant(SAME_METHOD), method)).map(([n, x]) => `${n} ${x}`))),
  often(field(['Max-Forwards'], number)),
);

/** Other fields, with wilder values. */
const extraField: fc.Arbitrary<string> = fc.oneof(
  field(['Contact', 'm'], fc.oneof(fc.constant('*'), fc.array(nameAddr, { minLength: 1, maxLength: 3 }).map((c) => c.join(',')))),
  field(['Content-Type', 'c'], fc.constantFrom('application/sdp', 'multipart/mixed;boundary=x', 'text/plain', '', '/', 'a/b;c')),
  field(['Supported', 'k', 'Require', 'Allow'], fc.array(token, { maxLength: 4 }).map((x) => x.join(', '))),
  field(['Route', 'Record-Route'], fc.array(nameAddr, { minLength: 1, maxLength: 3 }).map((x) => x.join(', '))),
  field(['Session-Expires', 'x', 'Min-SE', 'Expires', 'RSeq', 'RAck'], fc.tuple(number, params).map(([n, p]) => `${n}${p}`)),
  field(['Authorization', 'WWW-Authenticate', 'Proxy-Authorization'], fc.array(fc.tuple(token, word), { maxLength: 5 }).map((x) => `Digest ${x.map(([k, v]) => `${k}="${v}"`).join(', ')}`)),
  field(['X-Fuzz', 'Subject', 's', 'Event', 'o', 'Refer-To', 'r', 'Via'], word),
);

const body = fc.oneof(
  fc.constant(''),
  fc.constant('v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 6000 RTP/AVP 0\r\n'),
  fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a).toString('latin1')),
);

/** Content-Length fields for a body of `n` octets: right (long or compact), missing, off, huge, negative, unreadable, twice. */
const CONTENT_LENGTH: readonly ((n: number) => string[])[] = [
  (n) => [`Content-Length: ${n}`], (n) => [`l: ${n}`], () => [], (n) => [`Content-Length: ${n + 1}`],
  (n) => [`Content-Length: ${Math.max(0, n - 1)}`], () => ['Content-Length: 4294967296'], () => ['Content-Length: -1'],
  () => ['Content-Length: x'], (n) => [`Content-Length: ${n}`, 'l: 0'],
];
const contentLengthKind = fc.oneof({ weight: 24, arbitrary: fc.integer({ min: 0, max: 1 }) }, { weight: 7, arbitrary: fc.integer({ min: 2, max: CONTENT_LENGTH.length - 1 }) });

/** A request or response from the grammar, as wire bytes; header order rotated and sometimes reversed. */
export const grammarMessage: fc.Arbitrary<Buffer> = fc.record({
  m: method, isRequest: fc.integer({ min: 0, max: 4 }).map((k) => k > 0), status: fc.integer({ min: 100, max: 699 }), ruri: uri,
  required: requiredFields, extra: fc.array(extraField, { maxLength: 6 }), rotate: fc.nat(20), reverse: fc.boolean(), b: body, cl: contentLengthKind,
}).map(({ m, isRequest, status, ruri, required, extra, rotate, reverse, b, cl }) => {
  const fields = [...required, ...extra].filter((f) => f !== '').map((f) => f.replace(SAME_METHOD, m));
  const at = fields.length === 0 ? 0 : rotate % fields.length;
  const ordered = [...fields.slice(at), ...fields.slice(0, at)];
  if (reverse) ordered.reverse();
  const start = isRequest ? `${m} ${ruri} SIP/2.0` : `SIP/2.0 ${status} ${status < 300 ? 'OK' : 'Nope'}`;
  const lengths = CONTENT_LENGTH[cl]!(Buffer.byteLength(b, 'latin1'));
  return Buffer.from(`${[start, ...ordered, ...lengths].join('\r\n')}\r\n\r\n${b}`, 'latin1');
});

/** Chunk sizes for feeding a stream framer: mostly small, sometimes whole. */
export const chunkSizes = fc.array(fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 9, max: 600 }), fc.constant(100_000)), { minLength: 1, maxLength: 12 });
