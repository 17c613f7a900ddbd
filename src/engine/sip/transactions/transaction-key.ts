/** @module Matching messages to transactions (RFC 3261 §17.1.3 client side, §17.2.3 server side). */
import { BRANCH_MAGIC_COOKIE } from '../grammar/via.js';
import type { SipRequest, SipResponse } from '../messages/sip-message.js';

/**
 * §17.1.3: a response matches the client transaction whose request had the same top-Via branch
 * and whose method equals the CSeq method (a CANCEL and its INVITE share a branch).
 */
export function clientTransactionKey(branch: string, method: string): string {
  return `${branch}|${method}`;
}

export function clientKeyOfResponse(response: SipResponse): string {
  return clientTransactionKey(response.topVia.branch ?? '', response.cseq.method);
}

/**
 * §17.2.3: requests from RFC 3261 clients match on branch, sent-by and method, an ACK matching
 * its INVITE. Requests without the magic cookie (RFC 2543 clients) match on Request-URI, From
 * tag, Call-ID, CSeq number and the whole top Via.
 * NOTE: the 2543 key leaves the To tag out so an ACK (which carries our tag) finds its INVITE;
 * two INVITEs differing only in To tag would collide, which a 2543 client does not produce.
 */
export function serverTransactionKey(request: SipRequest): string {
  const via = request.topVia;
  const method = request.method === 'ACK' ? 'INVITE' : request.method;
  const branch = via.branch;
  if (branch?.startsWith(BRANCH_MAGIC_COOKIE)) {
    return `${branch}|${via.host}:${via.port ?? ''}|${method}`;
  }
  const top = request.headers.getAll('Via')[0] ?? '';
  return `2543|${request.uri}|${request.from.tag ?? ''}|${request.callId}|${request.cseq.seq}|${top}|${method}`;
}

/** §9.2: the key of the INVITE server transaction a CANCEL refers to. */
export function inviteKeyOfCancel(cancel: SipRequest): string {
  const via = cancel.topVia;
  const branch = via.branch;
  if (branch?.startsWith(BRANCH_MAGIC_COOKIE)) return `${branch}|${via.host}:${via.port ?? ''}|INVITE`;
  const top = cancel.headers.getAll('Via')[0] ?? '';
  return `2543|${cancel.uri}|${cancel.from.tag ?? ''}|${cancel.callId}|${cancel.cseq.seq}|${top}|INVITE`;
}

/** A new branch parameter with the RFC 3261 magic cookie (§8.1.1.7). */
export function newBranch(random: string): string {
  return `${BRANCH_MAGIC_COOKIE}${random}`;
}
