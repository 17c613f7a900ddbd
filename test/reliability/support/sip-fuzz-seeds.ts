/**
 * @module Seed messages for SIP parser fuzzing: the RFC 4475 torture messages, the RFC 5118 IPv6
 * messages (byte-exact from the shared test data) and the requests our sipp scenarios send,
 * rendered with fixed values for sipp's [keywords].
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const DATA = new URL('../../../../shared/testdata/', import.meta.url);
const SCENARIOS = join(import.meta.dirname, '..', '..', 'interop', 'scenarios');

function datFiles(folder: string): Buffer[] {
  const dir = new URL(`${folder}/`, DATA);
  return readdirSync(dir).filter((f) => f.endsWith('.dat')).sort().map((f) => readFileSync(new URL(f, dir)));
}

/** Fixed values for the sipp keywords our scenarios use; [len] is computed from the body. */
const KEYWORDS: Record<string, string> = {
  service: '+15550120', remote_ip: '127.0.0.1', remote_port: '5060', local_ip: '127.0.0.1', local_port: '5070',
  transport: 'UDP', branch: 'z9hG4bK-fuzz-1', pid: '4242', call_number: '1', call_id: '1-4242@127.0.0.1',
  local_ip_type: '4', media_ip_type: '4', media_ip: '127.0.0.1', media_port: '6000', auto_media_port: '6000',
  peer_tag_param: ';tag=fuzz-peer', cseq: '1', len: '0',
};

/**
 * One sipp `<send>` block as the wire message sipp would send: each line trimmed of the XML
 * indentation, CRLF line ends, Content-Length from the body ([len]). Blocks that use
 * [last_*:] copies are responses to a received request and are left out.
 */
function renderSend(cdata: string): Buffer | undefined {
  if (cdata.includes('[last_')) return undefined;
  const lines = cdata.split('\n').map((l) => l.trim());
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const blank = lines.indexOf('');
  const head = blank < 0 ? lines : lines.slice(0, blank);
  const body = blank < 0 ? '' : `${lines.slice(blank + 1).join('\r\n')}\r\n`;
  const fill = (s: string): string => s.replace(/\[([a-z_]+)(?::[^\]]*)?\]/g, (whole, key: string) => (key === 'len' ? String(Buffer.byteLength(body)) : KEYWORDS[key] ?? whole));
  const text = `${head.map(fill).join('\r\n')}\r\n\r\n${fill(body)}`;
  return /^[A-Z]+ \S+ SIP\/2\.0\r\n/.test(text) ? Buffer.from(text, 'latin1') : undefined;
}

/** The requests sent by every scenario in test/interop/scenarios, rendered. */
export function sippScenarioSeeds(): Buffer[] {
  const out: Buffer[] = [];
  for (const file of readdirSync(SCENARIOS).filter((f) => f.endsWith('.xml')).sort()) {
    const xml = readFileSync(join(SCENARIOS, file), 'utf8');
    for (const m of xml.matchAll(/<send[^>]*>\s*<!\[CDATA\[([\s\S]*?)\]\]>/g)) {
      const rendered = renderSend(m[1] ?? '');
      if (rendered) out.push(rendered);
    }
  }
  return out;
}

/** Every seed: RFC 4475, RFC 5118 and the rendered sipp requests. */
export function allSeeds(): { rfc4475: Buffer[]; rfc5118: Buffer[]; sipp: Buffer[] } {
  return { rfc4475: datFiles('rfc4475'), rfc5118: datFiles('rfc5118'), sipp: sippScenarioSeeds() };
}
