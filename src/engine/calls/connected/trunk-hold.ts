/**
 * @module Hold on a sip_trunk call (docs/DECISIONS.md, "Hold and media direction"): the tenant
 * (API) and the caller (a re-offer) may each hold it. While anyone holds it the bridge is held and
 * the recording paused; the edge hears hold music only on an API hold (on the caller's own hold
 * its phone plays its own).
 */
import type { AudioSource, MediaBridge } from '../../media/index.js';
import type { RecordingPort } from './recording-port.js';

export type TrunkHolder = 'api' | 'remote';

export class TrunkHold {
  readonly #holdMusic: () => AudioSource | null;
  readonly #heldBy = { api: false, remote: false };
  /** What the bridge does now: held for the API (with music), for the caller (silence), or not. */
  #applied: TrunkHolder | null = null;

  constructor(holdMusic: () => AudioSource | null) {
    this.#holdMusic = holdMusic;
  }

  get isHeld(): boolean {
    return this.#heldBy.api || this.#heldBy.remote;
  }

  /** `holder` holds (or stops holding) the call; applied to the bridge and the recording at once. */
  set(holder: TrunkHolder, held: boolean, bridge: MediaBridge | null, recorder: RecordingPort | null): void {
    this.#heldBy[holder] = held;
    this.apply(bridge, recorder);
  }

  /** Brings the bridge and the recording in line with who holds the call (a new bridge too). */
  apply(bridge: MediaBridge | null, recorder: RecordingPort | null): void {
    const mode = this.#heldBy.api ? 'api' : this.#heldBy.remote ? 'remote' : null;
    if (mode === null) recorder?.resume();
    else recorder?.pause();
    if (!bridge || mode === this.#applied) return;
    this.#applied = mode;
    if (mode === null) bridge.resume();
    else bridge.hold({ music: mode === 'api' ? (this.#holdMusic() ?? undefined) : undefined });
  }
}
