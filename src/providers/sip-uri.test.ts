import t from 'tap';
import { buildSipUri, escapeSipUser } from './sip-uri.js';

t.test('RFC 3261 25.1: user characters outside the user production are escaped', (t) => {
  t.equal(escapeSipUser('+15551234567'), '+15551234567');
  t.equal(escapeSipUser('agent_1.x-y'), 'agent_1.x-y');
  t.equal(escapeSipUser('a b@c:d'), 'a%20b%40c%3Ad');
  t.equal(escapeSipUser('é'), '%C3%A9');
  t.end();
});

t.test('RFC 3261 19.1: transport parameter, and the port only where asked and not given', (t) => {
  t.equal(buildSipUri({ user: '+1555', host: 'edge.example', transport: 'tcp' }), 'sip:+1555@edge.example;transport=tcp');
  t.equal(buildSipUri({ user: '+1555', host: 'edge.example', transport: 'udp', explicitPort: true }), 'sip:+1555@edge.example:5060;transport=udp');
  t.equal(buildSipUri({ user: '+1555', host: 'edge.example', transport: 'tls', explicitPort: true }), 'sip:+1555@edge.example:5061;transport=tls');
  t.equal(buildSipUri({ user: '+1555', host: '127.0.0.1:5099', transport: 'tls', explicitPort: true }), 'sip:+1555@127.0.0.1:5099;transport=tls');
  t.equal(buildSipUri({ user: '+1555', host: '[::1]', transport: 'tcp', explicitPort: true }), 'sip:+1555@[::1]:5060;transport=tcp');
  t.end();
});
