/**
 * @module A confirmed dialog's state as plain JSON (RFC 3261 §12.2.1.1): what another process needs
 * to send a request in the dialog (a BYE when the process that owned it died). `Dialog.snapshot()`
 * takes one and `Dialog.fromSnapshot()` builds the dialog back.
 */
import type { SipProtocol } from '../user-agent-core/transport-port.js';

/** The state of §12.1 a request within the dialog is built from, and the transport of its next hop. */
export interface DialogSnapshot {
  callId: string;
  localTag: string;
  remoteTag: string;
  /** From (ours) and To (theirs) values without tags, as the dialog sends them. */
  localUri: string;
  remoteUri: string;
  remoteTarget: string;
  /** Route header values in the order they are sent. */
  routeSet: string[];
  /** The CSeq of the last request we sent in the dialog when the snapshot was taken. */
  localSeq: number;
  /** The transport the next hop (first Route, else the remote target) was reached over. */
  transport: SipProtocol;
}

/**
 * How far above the snapshot's CSeq a request from the snapshot goes. The owner keeps sending after
 * the snapshot (session refreshes, hold re-INVITEs, UPDATE, INFO digits) and the far end answers 500
 * to a CSeq not above the last it saw (§12.2.2); gaps, however, are allowed ("It is possible for the
 * CSeq sequence number to be higher than the previous by more than one. This is not an error
 * condition", §12.2.2). So a margin no call reaches is the rule: 2^20 requests is a refresh or digit
 * every 100 ms for more than a day. Dialog CSeqs start below 2^16 (UAS) or at 1 (UAC), so the
 * result stays far below the 2^31 ceiling of §8.1.1.5; it is clamped there all the same.
 */
export const SNAPSHOT_CSEQ_MARGIN = 2 ** 20;
const CSEQ_CEILING = 2 ** 31 - 1;

/** The CSeq a request built from `snapshot` carries. */
export function snapshotCSeq(snapshot: Pick<DialogSnapshot, 'localSeq'>): number {
  return Math.min(snapshot.localSeq + SNAPSHOT_CSEQ_MARGIN, CSEQ_CEILING);
}

const PROTOCOLS: readonly string[] = ['UDP', 'TCP', 'TLS'];

/**
 * Reads a snapshot from JSON (stored by another process, so checked field by field); null when
 * the text is not one.
 */
export function parseDialogSnapshot(json: string): DialogSnapshot | null {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  const strings = ['callId', 'localTag', 'remoteTag', 'localUri', 'remoteUri', 'remoteTarget'] as const;
  if (!strings.every((k) => typeof o[k] === 'string' && o[k] !== '')) return null;
  if (!Array.isArray(o.routeSet) || !o.routeSet.every((r) => typeof r === 'string')) return null;
  if (typeof o.localSeq !== 'number' || !Number.isInteger(o.localSeq) || o.localSeq < 0 || o.localSeq > CSEQ_CEILING) return null;
  if (typeof o.transport !== 'string' || !PROTOCOLS.includes(o.transport)) return null;
  return {
    callId: o.callId as string, localTag: o.localTag as string, remoteTag: o.remoteTag as string,
    localUri: o.localUri as string, remoteUri: o.remoteUri as string, remoteTarget: o.remoteTarget as string,
    routeSet: o.routeSet, localSeq: o.localSeq, transport: o.transport as SipProtocol,
  };
}
