import t from 'tap';
import { isPortsExhausted, PortPool } from './port-pool.js';

t.test('RFC 3550 11: RTP ports are even, leaving port+1 for RTCP', (t) => {
  const pool = new PortPool({ min: 30001, max: 30010 });
  const ports = [pool.allocate(), pool.allocate(), pool.allocate(), pool.allocate()];
  t.same(ports, [30002, 30004, 30006, 30008]);
  t.equal(pool.available, 0, '30010 has no odd partner inside the range');
  t.end();
});

t.test('exhaustion is a value the caller maps to 503', (t) => {
  const pool = new PortPool({ min: 40000, max: 40003 });
  pool.allocate();
  pool.allocate();
  const third = pool.allocate();
  t.ok(isPortsExhausted(third));
  t.same(third, { error: 'ports-exhausted' });
  t.end();
});

t.test('a released port is reused last, so late packets of an old call miss new ones', (t) => {
  const pool = new PortPool({ min: 40000, max: 40005 });
  const first = pool.allocate() as number;
  pool.release(first);
  t.equal(pool.allocate(), 40002);
  t.equal(pool.allocate(), 40004);
  t.equal(pool.allocate(), 40000);
  t.throws(() => pool.release(41000), 'releasing a port never allocated is a bug');
  t.throws(() => new PortPool({ min: 40000, max: 40000 }));
  t.end();
});
