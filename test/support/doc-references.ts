/**
 * @module What comments, test names and docs cite: docs/ sections by name (`docs/API.md "Calls"`)
 * or by anchor (`docs/API.md#calls`), each of which must exist, and never a document outside the
 * repository (an interface contract's numbered sections) or a tracker's issue numbers, which a
 * reader of the repository cannot follow (README.md "Documentation").
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/** One reference that does not resolve, or one citation of a document outside the repository. */
export interface BadReference {
  file: string;
  line: number;
  text: string;
  why: string;
}

/**
 * Citations of documents outside the repository. Words may wrap onto the next comment line, so
 * the gaps allow line breaks and comment leaders (`*`, `//`, `--`).
 */
const GAP = String.raw`(?:\s|\*|//|--)+`;
const OUTSIDE: { pattern: RegExp; why: string }[] = [
  { pattern: new RegExp(String.raw`\bcontract${GAP}(?:sections?${GAP}|§\s*)?\d`, 'gi'), why: 'cites a numbered contract section; cite the docs/ section by name' },
  { pattern: new RegExp(String.raw`\bcontract's${GAP}[^.\n]{0,30}\bsections?${GAP}\d`, 'gi'), why: 'cites a numbered contract section; cite the docs/ section by name' },
  { pattern: new RegExp(String.raw`\bissues?${GAP}(?:#\s*)?\d+`, 'gi'), why: 'cites an issue number; cite the docs/ section by name' },
  { pattern: new RegExp(String.raw`\bissue${GAP}"[^"\n]+"`, 'gi'), why: 'cites an issue by title; cite the docs/ section by name' },
];

/** `docs/API.md "Calls"`, `API.md "Calls" and "States"` (inside docs/), `README.md "Tests"`. */
const BY_NAME = /\b((?:docs\/)?[A-Z][A-Z_-]*\.md) ("[^"\n]+"(?:(?:, | and )"[^"\n]+")*)/g;
/** `docs/API.md#calls`, `(RELIABILITY.md#drain)`, `../README.md#operator-cli`. */
const BY_ANCHOR = /((?:\.\.\/|docs\/)?[A-Z][A-Z_-]*\.md)#([A-Za-z0-9_-]+)/g;

/**
 * The names a section can be cited by: each heading, and each bold lead of a paragraph or list
 * item (`- **Hold and media direction.** …`, the docs' named decisions), as written and with
 * inline code marks dropped.
 */
function sectionNamesOf(markdown: string): Set<string> {
  const names = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = fenced ? null : /^#{1,6} (.+?)\s*#*\s*$/.exec(line) ?? /^(?:[-*] )?\*\*([^*]+?)\.?\*\*/.exec(line);
    if (!m) continue;
    names.add(m[1]!);
    names.add(m[1]!.replace(/`/g, ''));
  }
  return names;
}

/** GitHub's anchors for the headings: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = fenced ? null : /^#{1,6} (.+?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]!.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/**
 * Where a cited file is: `docs/X.md` from the root; a bare `X.md` beside the citing file (docs
 * cite each other so), else in docs/, else at the root (README.md).
 */
function resolveDoc(root: string, citingFile: string, cited: string): string | null {
  const candidates = cited.startsWith('docs/') ? [join(root, cited)]
    : cited.startsWith('../') ? [join(root, dirname(citingFile), cited)]
      : [join(root, dirname(citingFile), cited), join(root, 'docs', cited), join(root, cited)];
  return candidates.find((c) => existsSync(c)) ?? null;
}

const lineAt = (text: string, index: number): number => text.slice(0, index).split('\n').length;

/** Every bad reference in `text`, the content of `file` (relative to `root`). */
export function checkText(root: string, file: string, text: string): BadReference[] {
  const bad: BadReference[] = [];
  const docCache = new Map<string, string>();
  const read = (path: string): string => {
    if (!docCache.has(path)) docCache.set(path, readFileSync(path, 'utf8'));
    return docCache.get(path)!;
  };
  for (const { pattern, why } of OUTSIDE) {
    for (const m of text.matchAll(pattern)) bad.push({ file, line: lineAt(text, m.index), text: m[0].replace(/\s+/g, ' '), why });
  }
  for (const m of text.matchAll(BY_NAME)) {
    const path = resolveDoc(root, file, m[1]!);
    if (path === null) {
      bad.push({ file, line: lineAt(text, m.index), text: m[0], why: `no file ${m[1]}` });
      continue;
    }
    const headings = sectionNamesOf(read(path));
    for (const [, name] of m[2]!.matchAll(/"([^"\n]+)"/g)) {
      if (!headings.has(name!)) bad.push({ file, line: lineAt(text, m.index), text: m[0], why: `${relative(root, path)} has no heading or bold lead "${name}"` });
    }
  }
  for (const m of text.matchAll(BY_ANCHOR)) {
    const path = resolveDoc(root, file, m[1]!);
    if (path === null) bad.push({ file, line: lineAt(text, m.index), text: m[0], why: `no file ${m[1]}` });
    else if (!anchorsOf(read(path)).has(m[2]!)) bad.push({ file, line: lineAt(text, m.index), text: m[0], why: `${relative(root, path)} has no heading with anchor #${m[2]}` });
  }
  return bad;
}

/** Folders and files whose comments, test names and prose are checked. */
export const CHECKED = ['src', 'test', 'bench', 'scripts', 'sbc-config', 'docs', 'README.md'];
const EXTENSIONS = /\.(ts|mjs|js|md|sql|ya?ml|sh)$/;

/** Every file under the checked folders, relative to `root`. */
export function checkedFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    const abs = join(root, rel);
    if (!existsSync(abs)) return;
    if (!statSync(abs).isDirectory()) {
      if (EXTENSIONS.test(rel)) out.push(rel);
      return;
    }
    for (const e of readdirSync(abs, { withFileTypes: true })) {
      if (e.name !== 'node_modules' && !e.name.startsWith('.')) walk(join(rel, e.name));
    }
  };
  for (const top of CHECKED) walk(top);
  return out;
}
