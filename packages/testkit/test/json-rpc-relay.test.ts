/** The JSON-RPC fault relay answers every request, even when the node is gone or the body is not JSON. */
import { freePort, jsonRpcRelay, withoutTracing } from '../src';

it('error: a node that cannot be reached, or a body that is not JSON-RPC, is a 502 with the reason, never a hang', async () => {
  const relay = await jsonRpcRelay(`http://127.0.0.1:${await freePort()}`, withoutTracing);
  try {
    const post = async (body: string): Promise<[number, string]> => {
      const r = await fetch(relay.url, { method: 'POST', body, signal: AbortSignal.timeout(5_000) });
      return [r.status, await r.text()];
    };
    const [status, text] = await post('{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}');
    expect(status).toBe(502);
    expect(text).toMatch(/^relay: /);
    expect((await post('not json'))[0]).toBe(502);
    // A refused method is answered by the relay itself, node or no node.
    const [refusedStatus, refused] = await post('{"jsonrpc":"2.0","id":7,"method":"debug_traceTransaction"}');
    expect(refusedStatus).toBe(200);
    expect(JSON.parse(refused)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32601, message: 'the method debug_traceTransaction does not exist/is not available' },
    });
  } finally {
    await relay.close();
  }
});
