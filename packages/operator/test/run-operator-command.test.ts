/**
 * reportErrors, the exit-code and error-message shell of `audit` and `settle`: an error that
 * quotes a configured node URL (ethers' messages carry the request URL) is printed without the
 * URL's path and query, where hosted nodes keep the provider's key.
 */
import { parseChainDeployments } from '@pmm/core';
import { reportErrors } from '../src/cli/run-operator-command';

describe('reportErrors', () => {
  it("security: a node URL's key in an error message never reaches standard error", async () => {
    const rpcUrl = 'https://base.example/v2/operator-path-key-5150?apikey=operator-query-key-6160';
    parseChainDeployments({
      '8453': {
        chainId: 8453,
        rpcUrl,
        contracts: {
          router: '0x0000000000000000000000000000000000000001',
          helper: '0x0000000000000000000000000000000000000002',
          verifier: '0x0000000000000000000000000000000000000003',
        },
      },
    });
    const lines: string[] = [];
    const code = await reportErrors('audit', 'usage', { out: () => undefined, err: (l) => lines.push(l) }, () =>
      Promise.reject(new Error(`request timeout (requestUrl="${rpcUrl}", code=TIMEOUT)`)),
    );
    expect(code).toBe(1);
    expect(lines.join('\n')).toContain('request timeout');
    expect(lines.join('\n')).not.toMatch(/operator-(path|query)-key/);
  });
});
