# One image for every service; the command picks the service (see docker-compose.yml).
# Stage 1 builds the workspace; stage 2 keeps production dependencies and compiled output only.

FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN npm install -g pnpm@10.34.8
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc tsconfig.base.json tsconfig.json ./
COPY packages/core/package.json packages/core/
COPY packages/contracts/package.json packages/contracts/
COPY packages/devnet/package.json packages/devnet/
COPY packages/client/package.json packages/client/
COPY packages/stack/package.json packages/stack/
COPY packages/testkit/package.json packages/testkit/
COPY services/signer/package.json services/signer/
COPY services/indexer/package.json services/indexer/
COPY services/gateway/package.json services/gateway/
RUN pnpm install --frozen-lockfile
COPY packages packages
COPY services services
RUN pnpm run build \
 && pnpm install --frozen-lockfile --prod --offline \
 && find packages services -name '*.tsbuildinfo' -delete

FROM node:20-bookworm-slim AS runtime
# --max-semi-space-size: see packages/core/src/node-runtime.ts (SERVICE_NODE_FLAGS).
ENV NODE_ENV=production HOST=0.0.0.0 NODE_OPTIONS=--max-semi-space-size=32
WORKDIR /app
COPY --from=build /app/package.json /app/pnpm-workspace.yaml ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/packages packages
COPY --from=build /app/services services
USER node
# Overridden per service in docker-compose.yml.
CMD ["node", "services/gateway/dist/main.js"]
