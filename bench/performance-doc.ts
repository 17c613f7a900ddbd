/** @module docs/PERFORMANCE.md, where each benchmark owns one `## ` section and rewrites only that one. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const PERFORMANCE_DOC = join(import.meta.dirname, '../docs/PERFORMANCE.md');

/** Replaces the section starting at `heading` (up to the next `## ` heading), or appends it. */
export function replaceSection(doc: string, heading: string, section: string): string {
  const body = `${section.trimEnd()}\n`;
  const start = doc.indexOf(heading);
  if (start < 0) return `${doc.trimEnd()}\n\n${body}`;
  const next = doc.indexOf('\n## ', start + heading.length);
  return doc.slice(0, start) + body + (next < 0 ? '' : `\n${doc.slice(next + 1)}`);
}

/** Writes `section` under `heading` into docs/PERFORMANCE.md, leaving the other sections alone. */
export function writeSection(heading: string, section: string): void {
  const doc = existsSync(PERFORMANCE_DOC) ? readFileSync(PERFORMANCE_DOC, 'utf8') : '# Performance\n\nMeasured figures, each section written by its benchmark.\n';
  writeFileSync(PERFORMANCE_DOC, replaceSection(doc, heading, section));
}
