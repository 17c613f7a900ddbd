/**
 * @module Sending one request inside a dialog and waiting for its final response, answering a
 * 401/407 once with credentials and a new CSeq (RFC 3261 §22.2, §12.2.1.1).
 */
import type { SipRequest, SipResponse } from '../messages/sip-message.js';
import type { Dialog } from './dialog.js';
import type { DialogAuth, DialogHost } from './dialog-host.js';

/** Extra content of an in-dialog request. */
export interface InDialogRequestOptions {
  headers?: readonly (readonly [string, string])[];
  body?: Buffer;
  contentType?: string;
  /** Called with each provisional response. */
  onProvisional?: (response: SipResponse) => void;
}

/** What comes back: the final response, or a local failure mapped to 408 (§8.1.3.1) or 503 (§8.1.3.1 transport). */
export type InDialogOutcome = SipResponse | { status: 408 | 503; reason: string };

/** Builds the request and adds Contact on target-refresh methods. */
export function buildInDialogRequest(dialog: Dialog, host: DialogHost, method: string, o: InDialogRequestOptions, protocol: 'UDP' | 'TCP' | 'TLS'): SipRequest {
  const req = dialog.createRequest(method);
  if (method === 'INVITE' || method === 'UPDATE' || method === 'REFER' || method === 'SUBSCRIBE' || method === 'NOTIFY') {
    req.headers.append('Contact', host.contact(protocol));
  }
  for (const [k, v] of o.headers ?? []) req.headers.append(k, v);
  if (o.body && o.body.length > 0) {
    req.body = o.body;
    req.headers.append('Content-Type', o.contentType ?? 'application/sdp');
  }
  req.headers.set('Content-Length', String(req.body.length));
  return req;
}

/** Sends `method` in `dialog`; resolves with the final response (never rejects for protocol outcomes). */
export function sendInDialog(dialog: Dialog, host: DialogHost, method: string, o: InDialogRequestOptions, auth: DialogAuth): Promise<{ request: SipRequest; outcome: InDialogOutcome }> {
  return new Promise((resolve) => {
    const attempt = (authorized: boolean): void => {
      const target = host.targetFor(dialog.nextHopUri());
      const req = buildInDialogRequest(dialog, host, method, o, target.protocol);
      const creds = authorized ? auth?.authorize(method, req.uri) : undefined;
      if (creds) req.headers.append(creds.name, creds.value);
      let done = false;
      const finish = (outcome: InDialogOutcome): void => {
        if (done) return;
        done = true;
        resolve({ request: req, outcome });
      };
      host.sendRequest(req, target, {
        onResponse: (res) => {
          if (res.status < 200) {
            o.onProvisional?.(res);
            return;
          }
          if ((res.status === 401 || res.status === 407) && auth && !done) {
            const challenge = res.headers.getAll(res.status === 401 ? 'WWW-Authenticate' : 'Proxy-Authenticate');
            if (auth.handleChallenge(res.status, challenge)) {
              done = true;
              attempt(true);
              return;
            }
          }
          finish(res);
        },
        onTimeout: () => finish({ status: 408, reason: 'Request Timeout' }),
        onTransportError: () => finish({ status: 503, reason: 'Service Unavailable' }),
        // Ended without a final response (the user agent shut down): settle as a local 503, so a
        // caller awaiting the request is never left waiting. After a final response it is a no-op.
        onTerminated: () => finish({ status: 503, reason: 'Service Unavailable' }),
      });
    };
    attempt(auth?.hasChallenge ?? false);
  });
}
