/**
 * @module Looks for known secret values (canaries) in captured bytes and in every file under a
 * folder, in the forms a leak would take: as written, UTF-16LE, base64 and base64url at each of
 * the three byte alignments, hex in either case, and percent-encoded.
 */
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A secret to look for, with a name that says what it is. */
export interface Canary {
  name: string;
  value: string;
}

/** Where a hit was, and in which form. */
export interface SecretHit {
  secret: string;
  form: string;
  where: string;
  offset: number;
}

/** One place scanned: a label (a file path, "response 12 headers", "log") and its bytes. */
export interface ScanSource {
  where: string;
  data: Buffer;
}

/** The base64 characters that depend only on `bytes` when they start `shift` bytes into a stream. */
function base64Core(bytes: Buffer, shift: number, alphabet: 'base64' | 'base64url'): string {
  const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString(alphabet).replace(/=+$/, '');
  const start = Math.ceil((shift * 8) / 6);
  const end = Math.floor(((shift + bytes.length) * 8) / 6);
  return encoded.slice(start, end);
}

/** Every form of `value` searched for, by name; forms equal to another are kept once. */
export function formsOf(value: string): Map<string, Buffer> {
  const bytes = Buffer.from(value, 'utf8');
  const forms = new Map<string, Buffer>();
  const add = (name: string, data: Buffer): void => {
    if (![...forms.values()].some((f) => f.equals(data))) forms.set(name, data);
  };
  add('plain', bytes);
  add('utf16le', Buffer.from(value, 'utf16le'));
  for (const shift of [0, 1, 2]) {
    add(`base64@${shift}`, Buffer.from(base64Core(bytes, shift, 'base64')));
    add(`base64url@${shift}`, Buffer.from(base64Core(bytes, shift, 'base64url')));
  }
  add('hex', Buffer.from(bytes.toString('hex')));
  add('HEX', Buffer.from(bytes.toString('hex').toUpperCase()));
  const percent = encodeURIComponent(value);
  add('url-encoded', Buffer.from(percent));
  add('url-encoded-lower', Buffer.from(percent.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())));
  // Every byte escaped, as some clients do: %73%6b...
  add('url-encoded-all', Buffer.from([...bytes].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join('')));
  return forms;
}

/** Names of the forms {@link formsOf} searches, for reports. */
export const FORM_NAMES = ['plain', 'utf16le', 'base64 (3 alignments)', 'base64url (3 alignments)', 'hex', 'HEX', 'url-encoded (upper and lower escapes)', 'url-encoded every byte'];

/** Every occurrence of every canary, in every form, in every source. */
export function scanSources(canaries: readonly Canary[], sources: readonly ScanSource[]): SecretHit[] {
  const hits: SecretHit[] = [];
  for (const canary of canaries) {
    for (const [form, needle] of formsOf(canary.value)) {
      for (const source of sources) {
        for (let at = source.data.indexOf(needle); at !== -1; at = source.data.indexOf(needle, at + 1)) {
          hits.push({ secret: canary.name, form, where: source.where, offset: at });
        }
      }
    }
  }
  return hits;
}

/** Every regular file under `dir` (symlinks, pipes and sockets skipped), as scan sources. */
export function filesUnder(dir: string): ScanSource[] {
  const sources: ScanSource[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = lstatSync(path);
    if (stat.isDirectory()) sources.push(...filesUnder(path));
    else if (stat.isFile()) sources.push({ where: path, data: readFileSync(path) });
  }
  return sources;
}

/** One line per hit, for a failure message. */
export function describeHits(hits: readonly SecretHit[]): string {
  return hits.map((h) => `${h.secret} (${h.form}) in ${h.where} at byte ${h.offset}`).join('\n');
}
