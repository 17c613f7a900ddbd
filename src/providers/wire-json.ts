/** @module Defensive readers for vendor JSON messages: a wrong type reads as absent, never throws. */

/** A JSON object, or undefined for anything else (arrays and null included). */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

export function stringField(value: unknown, key: string): string | undefined {
  const v = asRecord(value)?.[key];
  return typeof v === 'string' ? v : undefined;
}

export function numberField(value: unknown, key: string): number | undefined {
  const v = asRecord(value)?.[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function recordField(value: unknown, key: string): Record<string, unknown> | undefined {
  return asRecord(asRecord(value)?.[key]);
}

/** Parses one text frame; undefined when it is not a JSON object. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    return asRecord(JSON.parse(text));
  } catch {
    return undefined;
  }
}
