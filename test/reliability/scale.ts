/**
 * @module How big a reliability run is. `npm test` runs each reliability test in its short form;
 * `npm run test:reliability` sets VGW_RELIABILITY=long and runs the same tests at full size
 * (a million fuzz inputs, a 50-call crash, a minute of flood), as docs/RELIABILITY.md describes.
 */
export const LONG_RUN = process.env.VGW_RELIABILITY === 'long';

/** The short figure under `npm test`, the long one under `npm run test:reliability`. */
export function scaled<T>(short: T, long: T): T {
  return LONG_RUN ? long : short;
}
