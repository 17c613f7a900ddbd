import t from 'tap';
import { uriUser } from '../setup/dialled-number.js';
import { behaviourFor, normalizeNumber, RESERVED_NUMBERS } from './reserved-numbers.js';

t.test('RFC 3261 19.1.1: the user part of a SIP URI, percent-decoded, without telephone-subscriber parameters', (t) => {
  t.equal(uriUser('sip:+15005550486@127.0.0.1:5090;transport=udp'), '+15005550486');
  t.equal(uriUser('<sip:%2B15005550404@sandbox.invalid>'), '+15005550404');
  t.equal(uriUser('sips:15005550503;npdi@host'), '15005550503');
  t.equal(uriUser('sip:127.0.0.1:5090'), '', 'no user part');
  t.equal(uriUser('sip:%zz@host'), '%zz', 'bad escapes are kept as written');
  t.end();
});

t.test('RFC 3966 5.1.1: visual separators and the + do not change the number', (t) => {
  t.equal(normalizeNumber('+1 (500) 555-0486'), '15005550486');
  t.equal(normalizeNumber('1.500.555.0486'), '15005550486');
  t.end();
});

t.test('each reserved number maps to its behaviour; every other number is answered', (t) => {
  t.same(behaviourFor('sip:+15005550486@h'), { kind: 'reject', status: 486 });
  t.same(behaviourFor('sip:15005550404@h'), { kind: 'reject', status: 404 });
  t.same(behaviourFor('sip:+15005550503@h'), { kind: 'reject', status: 503 });
  t.same(behaviourFor('sip:+15005550603@h'), { kind: 'reject', status: 603 });
  t.same(behaviourFor('sip:+15005550480@h'), { kind: 'ring-then-reject', status: 480 });
  t.same(behaviourFor('sip:+15005550408@h'), { kind: 'ring-forever' });
  t.same(behaviourFor('sip:+15551234567@h'), { kind: 'answer' });
  t.same(behaviourFor('sip:h:5090', '<sip:+15005550486@h>;tag=x'), { kind: 'reject', status: 486 }, 'the To user when the Request-URI has none');
  t.equal(Object.keys(RESERVED_NUMBERS).length, 6);
  t.end();
});
