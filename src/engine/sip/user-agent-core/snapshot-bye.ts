/**
 * @module Ending a dialog this process does not hold, from the snapshot its owner stored (the owner
 * died): a BYE as a new non-INVITE client transaction to the dialog's next hop (RFC 3261 §15.1.1,
 * §12.2.1.1), with a Reason header saying why (RFC 3326).
 */
import { Dialog } from '../dialogs/dialog.js';
import type { DialogSnapshot } from '../dialogs/dialog-snapshot.js';
import type { SipRequest } from '../messages/sip-message.js';
import type { ClientTransactionUser } from '../transactions/transaction.js';
import type { SipTarget } from './transport-port.js';

/**
 * RFC 3326 §2 with Q.850 cause 41, temporary failure: the session ended because the gateway side
 * failed, not because a party hung up.
 */
export const SNAPSHOT_BYE_REASON = 'Q.850;cause=41;text="Temporary failure"';

/** The final status of the BYE, or a local 408 (Timer F, §17.1.2.2) or 503 (transport failure, §8.1.3.1). */
export interface SnapshotByeOutcome {
  status: number;
  reason: string;
  request: SipRequest;
}

/** What sending needs from the user agent. */
export interface SnapshotByeHost {
  targetFor(uri: string): SipTarget;
  sendRequest(request: SipRequest, target: SipTarget, user: ClientTransactionUser): void;
}

/** The BYE a snapshot's dialog ends with: CSeq above the owner's (dialog-snapshot.ts), Reason, no body. */
export function byeFromSnapshot(snapshot: DialogSnapshot): { request: SipRequest; nextHop: string } {
  const dialog = Dialog.fromSnapshot(snapshot);
  const request = dialog.createRequest('BYE');
  request.headers.append('Reason', SNAPSHOT_BYE_REASON);
  request.headers.set('Content-Length', '0');
  return { request, nextHop: dialog.nextHopUri() };
}

/**
 * Sends the snapshot's BYE and resolves with its final response's status (never rejects). The
 * next hop is resolved as for any in-dialog request; the snapshot's transport is kept, since the
 * owner reached that hop over it.
 */
export function sendSnapshotBye(host: SnapshotByeHost, snapshot: DialogSnapshot): Promise<SnapshotByeOutcome> {
  const { request, nextHop } = byeFromSnapshot(snapshot);
  return new Promise((resolve) => {
    let done = false;
    const finish = (status: number, reason: string): void => {
      if (done) return;
      done = true;
      resolve({ status, reason, request });
    };
    let target: SipTarget;
    try {
      target = { ...host.targetFor(nextHop), protocol: snapshot.transport };
    } catch (err) {
      return finish(503, `next hop ${nextHop} cannot be resolved: ${err instanceof Error ? err.message : String(err)}`);
    }
    try {
      host.sendRequest(request, target, {
        onResponse: (res) => {
          if (res.status >= 200) finish(res.status, res.reason);
        },
        onTimeout: () => finish(408, 'Request Timeout'),
        onTransportError: () => finish(503, 'Service Unavailable'),
        onTerminated: () => finish(503, 'Service Unavailable'),
      });
    } catch (err) {
      finish(503, err instanceof Error ? err.message : String(err));
    }
  });
}
