/**
 * @module The ITU-T G.107 (06/2015) E-model: the transmission rating R of a connection from its
 * parameters, and the estimated MOS (conversational quality) from R (G.107 Annex B). A pure
 * function with the parameter names of G.107 Table 3, so a reviewer can compare term by term.
 * Equipment impairments of codecs come from ITU-T G.113 Appendix I.
 */

/** G.107 §7 Table 3 parameters; every one defaults to the table's default value. */
export interface EModelParameters {
  /** Send and receive loudness ratings (dB). */
  SLR: number;
  RLR: number;
  /** Sidetone masking rating and listener sidetone rating (dB). */
  STMR: number;
  LSTR: number;
  /** D-value of the telephone, send and receive side. */
  Ds: number;
  Dr: number;
  /** Talker echo loudness rating (dB) and weighted echo path loss (dB). */
  TELR: number;
  WEPL: number;
  /** Mean one-way delay of the echo path, absolute delay and round-trip delay (ms). */
  T: number;
  Ta: number;
  Tr: number;
  /** Number of quantization distortion units. */
  qdu: number;
  /** Equipment impairment factor and packet-loss robustness factor of the codec (G.113 Appendix I). */
  Ie: number;
  Bpl: number;
  /** Random packet-loss probability, in percent. */
  Ppl: number;
  /** Burst ratio: 1 for random loss. */
  BurstR: number;
  /** Circuit noise at the 0 dBr point (dBm0p) and noise floor at the receive side (dBmp). */
  Nc: number;
  Nfor: number;
  /** Room noise at the send and the receive side (dB(A)). */
  Ps: number;
  Pr: number;
  /** Advantage factor. */
  A: number;
}

/** G.107 Table 3 default values. */
export const G107_DEFAULTS: Readonly<EModelParameters> = Object.freeze({
  SLR: 8, RLR: 2, STMR: 15, LSTR: 18, Ds: 3, Dr: 3, TELR: 65, WEPL: 110, T: 0, Ta: 0, Tr: 0,
  qdu: 1, Ie: 0, Bpl: 1, Ppl: 0, BurstR: 1, Nc: -70, Nfor: -64, Ps: 35, Pr: 35, A: 0,
});

/** G.113 Appendix I, Table I.3: G.711 with packet loss concealment (Appendix I of G.711). */
export const G711_PLC = Object.freeze({ Ie: 0, Bpl: 25.1 });

const log10 = Math.log10;
const pow10 = (x: number): number => 10 ** x;

/** G.107 §7.1 and §7.2: the rating R of a connection (100 is best, below 50 nearly every user is dissatisfied). */
export function eModelRating(overrides: Partial<EModelParameters> = {}): number {
  const p: EModelParameters = { ...G107_DEFAULTS, ...overrides };
  const OLR = p.SLR + p.RLR;

  // §7.2.1 basic signal-to-noise ratio Ro.
  const Nfo = p.Nfor + p.RLR;
  const Pre = p.Pr + 10 * log10(1 + pow10((10 - p.LSTR) / 10));
  const Nor = p.RLR - 121 + Pre + 0.008 * (Pre - 35) ** 2;
  const Nos = p.Ps - p.SLR - p.Ds - 100 + 0.004 * (p.Ps - OLR - p.Ds - 14) ** 2;
  const No = 10 * log10(pow10(p.Nc / 10) + pow10(Nos / 10) + pow10(Nor / 10) + pow10(Nfo / 10));
  const Ro = 15 - 1.5 * (p.SLR + No);

  // §7.2.2 simultaneous impairment factor Is = Iolr + Ist + Iq.
  const Xolr = OLR + 0.2 * (64 + No - p.RLR);
  const Iolr = 20 * ((1 + (Xolr / 8) ** 8) ** (1 / 8) - Xolr / 8);
  const STMRo = -10 * log10(pow10(-p.STMR / 10) + Math.exp(-p.T / 4) * pow10(-p.TELR / 10));
  const Ist = 12 * (1 + ((STMRo - 13) / 6) ** 8) ** (1 / 8) - 28 * (1 + ((STMRo + 1) / 19.4) ** 35) ** (1 / 35)
    - 13 * (1 + ((STMRo - 3) / 33) ** 13) ** (1 / 13) + 29;
  const Q = 37 - 15 * log10(p.qdu);
  const G = 1.07 + 0.258 * Q + 0.0602 * Q ** 2;
  const Y = (Ro - 100) / 15 + 46 / 8.4 - G / 9;
  const Z = 46 / 30 - G / 40;
  const Iq = 15 * log10(1 + pow10(Y) + pow10(Z));
  const Is = Iolr + Ist + Iq;

  // §7.2.3 delay impairment factor Id = Idte + Idle + Idd.
  const Roe = -1.5 * (No - p.RLR);
  // TERV for STMR >= 9 dB; below, G.107 adds Ist/2 (not a case this product configures).
  const TERV = p.TELR - 40 * log10((1 + p.T / 10) / (1 + p.T / 150)) + 6 * Math.exp(-0.3 * p.T ** 2);
  const Re = 80 + 2.5 * (TERV - 14);
  const Idte = ((Roe - Re) / 2 + Math.sqrt((Roe - Re) ** 2 / 4 + 100) - 1) * (1 - Math.exp(-p.T));
  const Rle = 10.5 * (p.WEPL + 7) * (p.Tr + 1) ** -0.25;
  const Idle = (Ro - Rle) / 2 + Math.sqrt((Ro - Rle) ** 2 / 4 + 169);
  let Idd = 0;
  if (p.Ta > 100) {
    const X = log10(p.Ta / 100) / log10(2);
    Idd = 25 * ((1 + X ** 6) ** (1 / 6) - 3 * (1 + (X / 3) ** 6) ** (1 / 6) + 2);
  }
  const Id = Idte + Idle + Idd;

  // §7.2.4 effective equipment impairment factor with packet loss.
  const IeEff = p.Ie + (95 - p.Ie) * (p.Ppl / (p.Ppl / p.BurstR + p.Bpl));

  return Ro - Is - Id - IeEff + p.A;
}

/** G.107 Annex B (B-4): the estimated mean opinion score (conversational) from R. */
export function mosFromRating(R: number): number {
  if (R <= 0) return 1;
  if (R >= 100) return 4.5;
  return 1 + 0.035 * R + R * (R - 60) * (100 - R) * 7e-6;
}
