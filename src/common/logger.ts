/** @module Structured JSON logging (pino) with secrets redacted wherever they might appear. */
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * Paths pino censors. Secrets are also kept out of log calls by construction; this is the net
 * under that rule, so a mistake prints `[redacted]` instead of a key.
 */
export const REDACT_PATHS = [
  'api_key', '*.api_key', 'password', '*.password', 'secret', '*.secret', 'token', '*.token',
  'authorization', '*.authorization', 'cookie', '*.cookie', 'set-cookie', '*["set-cookie"]',
  'req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]',
  'headers.authorization', 'headers.cookie', 'headers["xi-api-key"]', '*.headers["xi-api-key"]',
];

export interface LoggerOptions {
  level: string;
  /** Where lines go; stdout when absent. Tests pass a stream to capture lines. */
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { service: 'voice-gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    options.destination ?? pino.destination({ sync: false }),
  );
}

/** A logger that writes nothing: for tests and CLI commands that must keep stdout clean. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
