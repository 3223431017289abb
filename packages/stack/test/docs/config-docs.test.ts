import { readFileSync } from 'node:fs';
import path from 'node:path';
import { renderConfigDocs } from '../support/config-docs';

describe('docs/configuration.md', () => {
  it('behavior: lists every setting of every service as the code declares it (run `npm run docs:config` after a change)', () => {
    const file = readFileSync(path.resolve(__dirname, '..', '..', '..', '..', 'docs', 'configuration.md'), 'utf8');
    expect(file).toBe(renderConfigDocs());
  });
});
