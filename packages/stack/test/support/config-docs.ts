/**
 * docs/configuration.md is generated from the settings the services declare, so the docs
 * cannot drift from the code: `npm run docs:config` rewrites it, and config-docs.test.ts fails
 * when it is out of date.
 */
import { defaultText, type Setting } from '@pmm/core';
import { GATEWAY_SETTINGS } from '@pmm/gateway';
import { INDEXER_SETTINGS, LEDGER_SETTINGS } from '@pmm/indexer';
import { SIGNER_SETTINGS, chainSettings } from '@pmm/signer';

type Spec = Record<string, Setting<unknown>>;

function table(spec: Spec): string {
  const rows = Object.entries(spec).map(([name, s]) => {
    const def = s.secret ? '*(secret)*' : 'default' in s ? `\`${defaultText(s.default)}\`` : '**required**';
    const env = s.secret ? `\`${s.env}\` / \`${s.env}_FILE\`` : `\`${s.env}\``;
    const key = s.envOnly ? '*(environment only)*' : `\`${name}\``;
    return `| ${env} | ${key} | ${def} | ${s.description.replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`;
  });
  return ['| environment | config file key | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

export function renderConfigDocs(): string {
  return `# Configuration

Generated from the services' declared settings (\`npm run docs:config\`); do not edit by hand.

Every service reads its settings from, in order of precedence: environment variables, then
the JSON file named by \`CONFIG_FILE\` (keys as in the "config file key" column), then the
default. A missing or invalid setting stops start-up with a message naming it. Secrets can be
given as \`X\` or as \`X_FILE\` (a path whose content is the value, e.g. a Docker secret), or as a
file named after the setting in lower case in the folder \`SECRETS_DIR\`; they are never logged.
The \`chains\` setting has the same shape as \`.local/chains.json\`, which \`npm start\` writes for
the services (without any service's key; on the devnet it carries the test users' wallet keys
for the demo) and which works directly as \`CONFIG_FILE\`:

\`\`\`json
{
  "chains": {
    "8453": {
      "chainId": 8453,
      "rpcUrl": "https://…",
      "wsUrl": "wss://…",
      "contracts": { "router": "0x…", "helper": "0x…", "verifier": "0x…", "multicall3": "0xcA11bde05977b3631167028862bE2a173976CA11" }
    }
  }
}
\`\`\`

Addresses the file leaves out come from the chain registry (\`packages/protocol/src/chains/chains.ts\`):
today only Multicall3, at its canonical address on 8453 and 56. Without a Multicall3 (chain
4663 unless configured), the indexer sends each block's calls as one JSON-RPC batch.

## Gateway (\`services/gateway\`)

${table(GATEWAY_SETTINGS as Spec)}

## Signer (\`services/signer\`)

${table(SIGNER_SETTINGS as Spec)}

Per served chain \`<id>\` (8453, 56, 4663):

${table(chainSettings(8453)).replace(/8453/g, '<id>')}

## Indexer (\`services/indexer\`, one process per chain)

${table(INDEXER_SETTINGS as Spec)}

## Ledger (\`services/indexer/dist/ledger-main.js\`, one process per chain)

The maker's ledger reads the node as the indexer does (the same settings, the same meanings) and
runs the limits on executed swaps (\`LIMIT_*\`, off unless set; amounts in the chain's quote token,
docs/operations/halts.md#limits-that-trip-on-what-executes). Its halts are confirmed durable like the
signer's audit records (\`REDIS_DURABILITY\`).

${table(LEDGER_SETTINGS as Spec)}
`;
}
