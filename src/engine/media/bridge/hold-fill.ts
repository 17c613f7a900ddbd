/**
 * @module What a bridge's legs hear while the call is held: leg a (the caller) hold music or
 * silence, leg b silence, a packet every 20 ms on each so that no media time-out fires at a
 * carrier or a platform. Apart from media-bridge.ts, whose relay passes nothing while held.
 */
import type { Clock } from '../../../common/clock.js';
import { SilenceSource, type AudioSource } from './audio-source.js';
import { isG711, type BridgeLegConfig } from './bridge-leg.js';
import { HoldMusicPlayer } from './hold-music-player.js';
import type { LegName } from './media-bridge-types.js';

/** Sends one generated packet (and its PCM, for taps) to a leg. */
export type GeneratedAudioSender = (pcm: Int16Array, packet: Buffer) => void;

/** The players of a held bridge, one per leg. */
export class HoldFill {
  readonly #players: Record<LegName, HoldMusicPlayer>;

  constructor(clock: Clock, send: Record<LegName, GeneratedAudioSender>) {
    this.#players = { a: new HoldMusicPlayer(clock, send.a), b: new HoldMusicPlayer(clock, send.b) };
  }

  /**
   * Plays `music` (or silence) onto leg a and silence onto leg b, in each leg's codec and payload
   * type, restarting what plays. G.711 legs only: the bridge encodes nothing else, so another leg
   * gets nothing. False when music was asked for but leg a's codec cannot carry it.
   */
  start(legs: Record<LegName, BridgeLegConfig>, music: AudioSource | null): boolean {
    let carried = true;
    for (const name of ['a', 'b'] as const) {
      const config = legs[name];
      const source = name === 'a' ? music : null;
      if (!isG711(config.encoding)) {
        this.#players[name].stop();
        if (source) carried = false;
        continue;
      }
      this.#players[name].start(source ?? new SilenceSource(), config.encoding, config.sendPayloadType);
    }
    return carried;
  }

  stop(): void {
    this.#players.a.stop();
    this.#players.b.stop();
  }
}
