// `npm run openapi`: rewrites services/gateway/openapi/openapi.json from the gateway's generator
// (services/gateway/src/docs/openapi/document.ts). Commit the result: a test fails when they differ.
import { writeFileSync } from 'node:fs';
import { OPENAPI_PATH } from '../services/gateway/src/docs/openapi-route';
import { renderOpenApiDocument } from '../services/gateway/src/docs/openapi/document';

writeFileSync(OPENAPI_PATH, renderOpenApiDocument());
console.log(`${OPENAPI_PATH} written`);
