import t from 'tap';
import { dtmfFromInfo } from './sip-info.js';

const body = (s: string): Buffer => Buffer.from(s, 'latin1');

t.test('application/dtmf-relay (the Cisco format): Signal is the key, Duration is ignored', (t) => {
  t.equal(dtmfFromInfo('application/dtmf-relay', body('Signal=5\r\nDuration=160\r\n')), '5');
  t.equal(dtmfFromInfo('Application/DTMF-Relay; charset=us-ascii', body('Signal= #\r\nDuration= 250\r\n')), '#', 'media type and spacing are case- and space-insensitive');
  t.equal(dtmfFromInfo('application/dtmf-relay', body('Duration=160\nsignal=*\n')), '*', 'in any order, LF line ends');
  t.equal(dtmfFromInfo('application/dtmf-relay', body('Signal=d\r\n')), 'D', 'A-D in either case');
  t.equal(dtmfFromInfo('application/dtmf-relay', body('Signal=11\r\nDuration=100\r\n')), '#', 'RFC 4733 event numbers 10-15 from some senders');
  t.equal(dtmfFromInfo('application/dtmf-relay', body('Signal=16\r\n')), null, 'flash (16) is not a key');
  t.equal(dtmfFromInfo('application/dtmf-relay', body('Signal=55\r\n')), null);
  t.equal(dtmfFromInfo('application/dtmf-relay', body('Duration=160\r\n')), null, 'no Signal line');
  t.equal(dtmfFromInfo('application/dtmf-relay', body('')), null);
  t.end();
});

t.test('application/dtmf: the key alone', (t) => {
  t.equal(dtmfFromInfo('application/dtmf', body('7')), '7');
  t.equal(dtmfFromInfo('application/dtmf', body(' 0\r\n')), '0');
  t.equal(dtmfFromInfo('application/dtmf', body('10')), '*');
  t.equal(dtmfFromInfo('application/dtmf', body('12')), 'A');
  t.equal(dtmfFromInfo('application/dtmf', body('x')), null);
  t.end();
});

t.test('other INFO bodies are not DTMF', (t) => {
  t.equal(dtmfFromInfo(undefined, body('Signal=5')), null, 'no Content-Type');
  t.equal(dtmfFromInfo('application/sdp', body('Signal=5')), null);
  t.equal(dtmfFromInfo('application/media_control+xml', body('<media_control/>')), null);
  t.end();
});
