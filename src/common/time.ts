/** @module Timestamps as the API writes them: RFC 3339 UTC with milliseconds. */
import type { Clock } from './clock.js';

export const isoTime = (ms: number): string => new Date(ms).toISOString();
export const isoNow = (clock: Clock): string => isoTime(clock.now());
