/** @module A HEP3 reader for tests (sipcapture HEP3 specification): the generic chunks (vendor 0) of one packet, by type, with the framing checked. */
export function parseHep3(packet: Buffer): Map<number, Buffer> {
  if (packet.toString('latin1', 0, 4) !== 'HEP3') throw new Error('not HEP3');
  if (packet.readUInt16BE(4) !== packet.length) throw new Error('total length does not match');
  const chunks = new Map<number, Buffer>();
  for (let at = 6; at < packet.length;) {
    const vendor = packet.readUInt16BE(at);
    const type = packet.readUInt16BE(at + 2);
    const length = packet.readUInt16BE(at + 4);
    if (length < 6 || at + length > packet.length) throw new Error(`bad chunk length ${length}`);
    if (vendor === 0) chunks.set(type, packet.subarray(at + 6, at + length));
    at += length;
  }
  return chunks;
}
