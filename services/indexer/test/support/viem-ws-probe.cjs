// Drives viem's `webSocket` transport in a plain Node process (jest's module sandbox cannot run
// viem's dynamic `import('isows')`), for chain-client-choice.devnet.test.ts. One JSON line per
// event on stdout; commands, one per line, on stdin:
//   subscribe            subscribe to newHeads; prints {"event":"head"} once a head arrived
//   state                prints {"event":"state","readyState":n,"errors":n}
//   request              a NEW transport for the same URL asks eth_chainId; prints {"event":"request","ok":bool,"error"?:string}
const { webSocket } = require('viem');
const readline = require('node:readline');

const [url, attempts, delay] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const options = { keepAlive: { interval: 300 }, reconnect: { attempts, delay }, timeout: 500, retryCount: 0 };
const print = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
const transport = webSocket(url, options)({});
let errors = 0;
let sawHead = false;

readline.createInterface({ input: process.stdin }).on('line', async (command) => {
  try {
    if (command === 'subscribe') {
      await transport.value.subscribe({
        params: ['newHeads'],
        onData: () => {
          if (!sawHead) print({ event: 'head' });
          sawHead = true;
        },
        onError: () => errors++,
      });
    } else if (command === 'state') {
      const client = await transport.value.getRpcClient();
      print({ event: 'state', readyState: client.socket.readyState, errors });
    } else if (command === 'request') {
      const fresh = webSocket(url, options)({});
      try {
        await fresh.request({ method: 'eth_chainId' });
        print({ event: 'request', ok: true });
      } catch (error) {
        print({ event: 'request', ok: false, error: error.name, cause: error.cause?.name });
      }
    }
  } catch (error) {
    print({ event: 'failed', error: error.message });
  }
});
print({ event: 'started' });
