/**
 * @module In-band DTMF generation (ITU-T Q.23): each key is the sum of one low-group (row) and one
 * high-group (column) sine, for carriers that negotiated no telephone-event.
 */

/** Row and column frequencies in Hz of each key, ITU-T Q.23. */
export const DTMF_FREQUENCIES: Readonly<Record<string, readonly [number, number]>> = {
  1: [697, 1209], 2: [697, 1336], 3: [697, 1477], A: [697, 1633],
  4: [770, 1209], 5: [770, 1336], 6: [770, 1477], B: [770, 1633],
  7: [852, 1209], 8: [852, 1336], 9: [852, 1477], C: [852, 1633],
  '*': [941, 1209], 0: [941, 1336], '#': [941, 1477], D: [941, 1633],
};

/** Levels and timing of generated keys. */
export interface DtmfToneOptions {
  sampleRate?: number;
  /** Tone on, in ms (Q.24 receivers must take 40 ms; 70 ms is what dialers send). */
  onMs?: number;
  /** Silence after each tone, in ms. */
  offMs?: number;
  /** Level of the low-group tone in dBm0. */
  lowDbm0?: number;
  /** How many dB the high group is above the low group (Q.23 allows the high group to be stronger; 0 to 4 dB is usual). */
  twistDb?: number;
}

/**
 * The peak of a 0 dBm0 sine in 16-bit linear PCM: G.711's digital milliwatt (ITU-T G.711
 * Table 5) is a sine whose µ-law peak decodes to 3.17 dB below the full scale of 8159 × 4.
 */
const DBM0_PEAK = 22_300;

/**
 * One key as PCM: `onMs` of the two tones, then `offMs` of silence. The default levels, -8 dBm0
 * low and -6 dBm0 high, sum to a peak well inside 16 bits and above every receiver's minimum
 * (about -25 dBm0 per tone).
 */
export function dtmfTone(key: string, options: DtmfToneOptions = {}): Int16Array {
  const pair = DTMF_FREQUENCIES[key.toUpperCase()];
  if (!pair) throw new RangeError(`no DTMF key ${key}`);
  const rate = options.sampleRate ?? 8000;
  const on = Math.round(((options.onMs ?? 70) * rate) / 1000);
  const off = Math.round(((options.offMs ?? 50) * rate) / 1000);
  const lowDbm0 = options.lowDbm0 ?? -8;
  const low = DBM0_PEAK * 10 ** (lowDbm0 / 20);
  const high = DBM0_PEAK * 10 ** ((lowDbm0 + (options.twistDb ?? 2)) / 20);
  const out = new Int16Array(on + off);
  const [fl, fh] = pair;
  for (let i = 0; i < on; i++) {
    out[i] = Math.round(low * Math.sin((2 * Math.PI * fl * i) / rate) + high * Math.sin((2 * Math.PI * fh * i) / rate));
  }
  return out;
}
