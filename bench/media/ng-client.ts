/** @module Minimal rtpengine "ng" control client: bencode over UDP with a cookie prefix. */
import { createSocket, type Socket } from 'node:dgram';
import { randomBytes } from 'node:crypto';

/** A bencode value as the ng protocol uses it (no floats). */
export type Bencoded = string | number | Bencoded[] | { [key: string]: Bencoded };

export function bencode(value: Bencoded): string {
  if (typeof value === 'number') return `i${Math.trunc(value)}e`;
  if (typeof value === 'string') return `${Buffer.byteLength(value)}:${value}`;
  if (Array.isArray(value)) return `l${value.map(bencode).join('')}e`;
  const keys = Object.keys(value).sort();
  return `d${keys.map((k) => bencode(k) + bencode(value[k]!)).join('')}e`;
}

/** Decodes one bencoded value from `buf` at `pos`. */
export function bdecode(buf: Buffer, pos = 0): { value: Bencoded; next: number } {
  const c = String.fromCharCode(buf[pos]!);
  if (c === 'i') {
    const end = buf.indexOf(0x65, pos);
    return { value: Number(buf.toString('latin1', pos + 1, end)), next: end + 1 };
  }
  if (c === 'l' || c === 'd') {
    const items: Bencoded[] = [];
    let p = pos + 1;
    while (buf[p] !== 0x65) {
      const item = bdecode(buf, p);
      items.push(item.value);
      p = item.next;
    }
    if (c === 'l') return { value: items, next: p + 1 };
    const dict: Record<string, Bencoded> = {};
    for (let i = 0; i < items.length; i += 2) dict[items[i] as string] = items[i + 1]!;
    return { value: dict, next: p + 1 };
  }
  const colon = buf.indexOf(0x3a, pos);
  const len = Number(buf.toString('latin1', pos, colon));
  return { value: buf.toString('utf8', colon + 1, colon + 1 + len), next: colon + 1 + len };
}

/** Sends ng commands to one rtpengine and resolves with the decoded reply dictionary. */
export class NgClient {
  readonly #socket: Socket;
  readonly #port: number;
  readonly #pending = new Map<string, (reply: Record<string, Bencoded>) => void>();

  private constructor(socket: Socket, port: number) {
    this.#socket = socket;
    this.#port = port;
    socket.on('message', (msg) => {
      const space = msg.indexOf(0x20);
      const cookie = msg.toString('latin1', 0, space);
      this.#pending.get(cookie)?.(bdecode(msg, space + 1).value as Record<string, Bencoded>);
    });
  }

  static async open(port: number): Promise<NgClient> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return new NgClient(socket, port);
  }

  command(dict: Record<string, Bencoded>, timeoutMs = 2000): Promise<Record<string, Bencoded>> {
    const cookie = randomBytes(8).toString('hex');
    const packet = Buffer.from(`${cookie} ${bencode(dict)}`, 'utf8');
    return new Promise((resolve, reject) => {
      const retry = setInterval(() => this.#socket.send(packet, this.#port, '127.0.0.1'), 500);
      const timer = setTimeout(() => {
        clearInterval(retry);
        this.#pending.delete(cookie);
        reject(new Error(`ng ${JSON.stringify(dict.command)}: no reply`));
      }, timeoutMs);
      this.#pending.set(cookie, (reply) => {
        clearInterval(retry);
        clearTimeout(timer);
        this.#pending.delete(cookie);
        resolve(reply);
      });
      this.#socket.send(packet, this.#port, '127.0.0.1');
    });
  }

  close(): void {
    this.#socket.close();
  }
}
