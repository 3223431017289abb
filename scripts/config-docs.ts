// `npm run docs:config`: rewrites docs/configuration.md from the services' declared settings.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderConfigDocs } from '../packages/stack/test/support/config-docs';

writeFileSync(path.resolve(__dirname, '..', 'docs', 'configuration.md'), renderConfigDocs());
console.log('docs/configuration.md written');
