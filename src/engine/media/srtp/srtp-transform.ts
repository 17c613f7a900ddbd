/** @module The SRTP transform of one RTP session (RFC 3711): a sending and a receiving context, kept across re-keyings that repeat a key. */
import { SrtpReceiver } from './srtp-receiver.js';
import { SrtpSender } from './srtp-sender.js';
import { sameMasterKey, type SrtpMasterKey } from './srtp-suite.js';

/** SRTP master keys of a session: ours protect what we send, the far end's what we receive (RFC 4568 §6.1). */
export interface SrtpKeys {
  send: SrtpMasterKey;
  receive: SrtpMasterKey;
}

export class SrtpTransform {
  readonly sender: SrtpSender;
  readonly receiver: SrtpReceiver;
  readonly keys: SrtpKeys;

  private constructor(keys: SrtpKeys, sender: SrtpSender, receiver: SrtpReceiver) {
    this.keys = keys;
    this.sender = sender;
    this.receiver = receiver;
  }

  /**
   * The transform for `keys`, reusing the contexts of `current` whose key is unchanged: a re-offer
   * that repeats a key keeps its rollover counter and replay window (RFC 3711 §3.2.1).
   */
  static for(keys: SrtpKeys, current: SrtpTransform | null): SrtpTransform {
    const sender = current && sameMasterKey(current.keys.send, keys.send) ? current.sender : new SrtpSender(keys.send);
    const receiver = current && sameMasterKey(current.keys.receive, keys.receive) ? current.receiver : new SrtpReceiver(keys.receive);
    return new SrtpTransform(keys, sender, receiver);
  }

  get suite(): string {
    return this.keys.send.suite.name;
  }
}
