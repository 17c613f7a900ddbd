/** @module How the UA core reports upward: the delegate of the layer above, every method optional. */
import type { SipRequest, SipResponse } from '../messages/sip-message.js';
import type { InviteServerTransaction } from '../transactions/invite-server-transaction.js';
import type { NonInviteServerTransaction } from '../transactions/non-invite-server-transaction.js';
import type { SipSource } from './transport-port.js';

/** What to do with a request from a source that matches no carrier (carrier source filtering). */
export type SourceVerdict = 'allow' | 'reject' | 'drop';

/** Callbacks of the UA core. */
export interface UserAgentCoreDelegate {
  /** A new INVITE outside any dialog. A response sent before this returns replaces the 100 Trying (§17.2.1); otherwise the core sends the 100 right after. */
  onInvite?(request: SipRequest, transaction: InviteServerTransaction, source: SipSource): void;
  /** A request inside a dialog the core knows (BYE, re-INVITE, UPDATE, INFO, REFER, NOTIFY, OPTIONS, PRACK). */
  onDialogRequest?(dialogId: string, request: SipRequest, transaction: InviteServerTransaction | NonInviteServerTransaction): boolean;
  /** An ACK for a 2xx (it has its own branch, so no transaction matches it: §17.1.1.3). */
  onDialogAck?(dialogId: string, ack: SipRequest): void;
  /** A 2xx to INVITE after its client transaction ended: the dialog re-sends its ACK (§13.2.2.4). */
  onStray2xx?(dialogId: string, response: SipResponse): void;
  /** A CANCEL matched a pending INVITE: the core already answered 200 to the CANCEL (§9.2). */
  onCancel?(inviteTransaction: InviteServerTransaction, cancel: SipRequest): void;
}
