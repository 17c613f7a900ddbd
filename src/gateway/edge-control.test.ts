/**
 * @module The engine's side of the edge's JSON-RPC when the edge is not there (docs/CLUSTER.md
 * "Drain"): nothing without `cluster.edge.rpc_url`; a refused connection is logged, not thrown.
 * The call that succeeds is run against Kamailio in test/interop/cluster-edge.test.ts.
 */
import t from 'tap';
import { createLogger } from '../common/logger.js';
import { loadConfig } from '../config/load-config.js';
import { freePort } from '../../test/support/sip-sipp.js';
import { edgeDestination, leaveEdge } from './edge-control.js';

function capture(): { logger: ReturnType<typeof createLogger>; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger({ level: 'info', destination: { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>); } } }) };
}

t.test('docs/CLUSTER.md "Drain": the destination is cluster.edge.destination, else sip:<host>:<port> where SIP listens', (t) => {
  const listening = { host: '10.0.0.2', udpPort: 5080 };
  t.equal(edgeDestination(loadConfig({ env: {} }), listening), 'sip:10.0.0.2:5080');
  t.equal(edgeDestination(loadConfig({ env: { VGW_EDGE_DESTINATION: 'sip:engine-a.example:5060' } }), listening), 'sip:engine-a.example:5060');
  t.equal(edgeDestination(loadConfig({ env: {} }), { host: '::1', udpPort: 5080 }), 'sip:[::1]:5080');
  t.end();
});

t.test('docs/CLUSTER.md "Drain": without cluster.edge.rpc_url nothing is sent; an edge that refuses the connection is logged and the drain goes on', async (t) => {
  const { logger, lines } = capture();
  t.equal(await leaveEdge(loadConfig({ env: {} }), { host: '127.0.0.1', udpPort: 5080 }, logger), false);
  t.same(lines, [], 'nothing to say without an edge');
  // A port nobody listens on: the connection is refused.
  const rpcUrl = `http://127.0.0.1:${await freePort()}/RPC`;
  t.equal(await leaveEdge(loadConfig({ env: { VGW_EDGE_RPC_URL: rpcUrl } }), { host: '127.0.0.1', udpPort: 5080 }, logger), false);
  t.match(lines, [{ level: 'warn', err: { message: /ECONNREFUSED/ }, destination: 'sip:127.0.0.1:5080', msg: /probes will take it out/ }]);
});
