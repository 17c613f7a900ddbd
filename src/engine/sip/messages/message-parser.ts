/** @module parseMessage: one SIP message from a Buffer (a UDP datagram or a framed stream message). */
import { parseContentLength } from '../grammar/cseq.js';
import { isToken, isWs, trimWs } from '../grammar/lexical.js';
import { SipParseError } from '../grammar/parse-error.js';
import { SipHeaders } from './sip-headers.js';
import { SipRequest, SipResponse } from './sip-message.js';
import { validateMessage } from './validate.js';

/**
 * The result of parsing. On failure, `request` is present when the start line and enough header
 * fields were readable for a UAS to answer (RFC 3261 8.2: a malformed request gets a 400, or
 * 505 for another SIP version); `error.status` says which.
 */
export type ParseOutcome =
  | { ok: true; message: SipRequest | SipResponse }
  | { ok: false; error: SipParseError; request?: SipRequest };

export interface ParseOptions {
  /**
   * Stream transports frame by Content-Length before parsing (RFC 3261 18.3), so the body is
   * exactly what follows the headers. For datagrams (the default), a missing Content-Length means
   * "the rest of the datagram".
   */
  stream?: boolean;
}

const CRLFCRLF = Buffer.from('\r\n\r\n');

/*
 * Message layout (RFC 3261 7):
 *
 *   [CRLF...]                ignored before the start line (RFC 3261 7.5)
 *   start-line CRLF          Request-Line or Status-Line, single SP separated
 *   *( message-header CRLF ) folded lines (CRLF + SP/HTAB) join the previous header
 *   CRLF                     end of headers: the first CRLFCRLF
 *   [ message-body ]         exactly Content-Length octets; octets beyond it are ignored (18.3)
 */
export function parseMessage(buf: Buffer, options: ParseOptions = {}): ParseOutcome {
  let start = 0;
  while (start + 1 < buf.length && buf[start] === 0x0d && buf[start + 1] === 0x0a) start += 2;
  const headEnd = buf.indexOf(CRLFCRLF, start);
  if (headEnd < 0) return { ok: false, error: new SipParseError('no empty line after the header section') };
  const head = parseHead(buf.toString('utf8', start, headEnd));
  const request = head.start.kind === 'request' ? head.start.message : undefined;
  const fail = (error: SipParseError): ParseOutcome => (request ? { ok: false, error, request } : { ok: false, error });
  if (head.start.kind === 'garbage') return fail(head.start.error);
  const message = head.start.message;
  message.headers = head.headers;
  if (head.error) return fail(head.error);
  if (head.start.error) return fail(head.start.error);
  const bodyStart = headEnd + 4;
  const body = frameBody(buf, bodyStart, message.headers, options.stream === true);
  if (body instanceof SipParseError) return fail(body);
  message.body = body;
  const invalid = validateMessage(message);
  if (invalid) return fail(invalid);
  return { ok: true, message };
}

/** RFC 3261 18.3: Content-Length octets of body; a larger value than what arrived is an error (RFC 4475 3.1.2.2). */
function frameBody(buf: Buffer, bodyStart: number, headers: SipHeaders, stream: boolean): Buffer | SipParseError {
  const values = headers.getAllFields('Content-Length');
  // RFC 4475 3.3.9: two Content-Length fields leave the body length unknowable.
  if (values.length > 1) return new SipParseError('more than one Content-Length');
  const available = buf.length - bodyStart;
  if (values.length === 0) return stream ? buf.subarray(bodyStart, bodyStart) : buf.subarray(bodyStart);
  let length: number;
  try {
    length = parseContentLength(values[0]!);
  } catch (err) {
    return err as SipParseError;
  }
  if (length > available) return new SipParseError('Content-Length larger than the message');
  return buf.subarray(bodyStart, bodyStart + length);
}

type StartLine =
  | { kind: 'request'; message: SipRequest; error?: SipParseError }
  | { kind: 'response'; message: SipResponse; error?: SipParseError }
  | { kind: 'garbage'; error: SipParseError };

interface Head {
  start: StartLine;
  headers: SipHeaders;
  error?: SipParseError;
}

function parseHead(text: string): Head {
  const lines = text.split('\r\n');
  const start = parseStartLine(lines[0] ?? '');
  const headers = new SipHeaders();
  let name: string | undefined;
  let value = '';
  const flush = (): void => {
    if (name !== undefined) headers.append(name, trimWs(value));
  };
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.length > 0 && isWs(line.charCodeAt(0))) {
      // RFC 3261 7.3.1: a folded line continues the previous field; the fold counts as one SP.
      if (name === undefined) return { start, headers, error: new SipParseError('folded line before any header') };
      value += ` ${trimWs(line)}`;
      continue;
    }
    flush();
    const colon = line.indexOf(':');
    const fieldName = colon < 0 ? '' : trimWs(line.slice(0, colon));
    if (!isToken(fieldName)) return { start, headers, error: new SipParseError(`malformed header line "${line.slice(0, 40)}"`) };
    name = fieldName;
    value = line.slice(colon + 1);
  }
  flush();
  return { start, headers };
}

/** Request-Line = Method SP Request-URI SP SIP-Version; Status-Line = SIP-Version SP Status-Code SP Reason-Phrase. */
function parseStartLine(line: string): StartLine {
  if (line.startsWith('SIP/') || line.startsWith('sip/')) return parseStatusLine(line);
  const sp1 = line.indexOf(' ');
  const method = sp1 < 0 ? line : line.slice(0, sp1);
  if (!isToken(method)) return { kind: 'garbage', error: new SipParseError('bad start line') };
  const sp2 = line.indexOf(' ', sp1 + 1);
  const uri = sp2 < 0 ? '' : line.slice(sp1 + 1, sp2);
  const version = sp2 < 0 ? '' : line.slice(sp2 + 1);
  const message = new SipRequest(method, uri);
  // RFC 4475 3.1.2.8-3.1.2.10: exactly one SP between elements, none at the end, no LWS in the URI.
  if (sp1 < 0 || sp2 < 0 || uri.length === 0 || version.indexOf(' ') >= 0 || /[\t]/.test(line)) {
    return { kind: 'request', message, error: new SipParseError('malformed Request-Line') };
  }
  const versionError = checkVersion(version);
  return versionError ? { kind: 'request', message, error: versionError } : { kind: 'request', message };
}

function parseStatusLine(line: string): StartLine {
  const sp1 = line.indexOf(' ');
  const version = sp1 < 0 ? line : line.slice(0, sp1);
  const rest = sp1 < 0 ? '' : line.slice(sp1 + 1);
  const sp2 = rest.indexOf(' ');
  const code = sp2 < 0 ? rest : rest.slice(0, sp2);
  // Status-Code = 3DIGIT (RFC 3261 7.2; RFC 4475 3.1.2.19 overlarge code).
  if (!/^[1-6][0-9][0-9]$/.test(code)) return { kind: 'garbage', error: new SipParseError('bad status code') };
  const message = new SipResponse(Number(code), sp2 < 0 ? '' : rest.slice(sp2 + 1));
  const versionError = checkVersion(version);
  return versionError ? { kind: 'response', message, error: versionError } : { kind: 'response', message };
}

/** RFC 3261 8.2.2 / RFC 4475 3.1.2.16: another SIP version is answered with 505. */
function checkVersion(version: string): SipParseError | undefined {
  if (version.toUpperCase() === 'SIP/2.0') return undefined;
  if (/^SIP\/[0-9]{1,4}\.[0-9]{1,4}$/i.test(version)) return new SipParseError(`unsupported version ${version}`, 505);
  return new SipParseError('bad SIP version');
}
