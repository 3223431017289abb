# Images of the service (see docker-compose.yml and docs/operations/run-compose.md):
#   runtime (last stage, the default target)  the gateway, the signer and the indexer: compiled JavaScript and
#                             their production dependencies only; the command picks the service.
#   devnet                    the three local devnet chains (anvil), for trying the stack.
#   operator                  the operator's commands, `audit`, `settle`, `markouts`, `fills` and `risk`
#                             (packages/operator): they read the chains, the audit trail, the ledger
#                             and the halts, hold no key, and are not in runtime.
#   lb                        HAProxy in front of the gateway replicas (docker-compose.yml).
# Both run Node 24 (the maintained LTS); the code itself supports Node >= 20.
#
#   docker build -t pmm-quote-service .                  # runtime
#   docker build --target devnet -t pmm-quote-devnet .   # devnet
#   docker build --target operator -t pmm-operator .     # audit, settle, markouts, fills and risk

# Base image, pinned by digest (the tag beside it is for readers): every build gets the same
# bytes whatever the tag points to today. To update it, see docs/operations/run-compose.md#base-images.
# Override (e.g. a registry mirror, a local stand-in without a registry digest):
# --build-arg NODE_IMAGE=<image>, or NODE_IMAGE in the environment of `docker compose build`.
# An empty NODE_IMAGE (what Compose v1 passes when the variable is unset) keeps the pin.
ARG NODE_IMAGE_PIN=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d
ARG NODE_IMAGE=

# ---- base: the one place the base image is chosen -------------------------------------------
FROM ${NODE_IMAGE:-${NODE_IMAGE_PIN}} AS base

# ---- build: the whole workspace, compiled ---------------------------------------------------
FROM base AS build
# No TTY during a build: without CI=true pnpm aborts instead of replacing node_modules.
ENV CI=true
WORKDIR /app
# pkcs11js (the PKCS#11 key backend, packages/core) has no prebuilt binary: node-gyp builds it
# here with the compiler, against the Node headers the official image ships in /usr/local/include
# (no download from nodejs.org); only its built .node file reaches the runtime image.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local
RUN npm install -g pnpm@10.34.8
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc tsconfig.base.json tsconfig.json ./
COPY packages/protocol/package.json packages/protocol/
COPY packages/core/package.json packages/core/
COPY packages/contracts/package.json packages/contracts/
COPY packages/devnet/package.json packages/devnet/
COPY packages/client/package.json packages/client/
COPY packages/stack/package.json packages/stack/
COPY packages/testkit/package.json packages/testkit/
COPY packages/operator/package.json packages/operator/
COPY services/signer/package.json services/signer/
COPY services/indexer/package.json services/indexer/
COPY services/gateway/package.json services/gateway/
RUN pnpm install --frozen-lockfile
COPY packages packages
COPY services services
RUN pnpm run build

# ---- prune: one folder per image with only what it runs (scripts/docker/assemble-image.sh) ----
FROM build AS prune
COPY scripts/docker/assemble-image.sh /usr/local/bin/assemble-image
RUN assemble-image /out/runtime '{./services/*}...' \
      packages/protocol packages/core packages/contracts packages/operator services/gateway services/signer services/indexer \
 && assemble-image /out/devnet '{./packages/devnet}...' packages/protocol packages/core packages/contracts packages/devnet

# ---- devnet -------------------------------------------------------------------------------------
FROM base AS devnet
ENV NODE_ENV=production
WORKDIR /app
COPY --from=prune /out/devnet ./
# Named volumes copy these folders' owner and mode on first use, so the devnet (user node) can
# write its chains file and each service's secrets there; a missing bind-mount folder would be
# created by root.
RUN mkdir -p /devnet /devnet-secrets/signer /devnet-secrets/gateway /devnet-secrets/indexer-8453 \
      /devnet-secrets/indexer-56 /devnet-secrets/indexer-4663 /devnet-secrets/keys /devnet-secrets/operator \
      /devnet-secrets/ledger-8453 /devnet-secrets/ledger-56 /devnet-secrets/ledger-4663 /devnet-secrets/risk \
      /devnet-secrets/redis-users \
 && chown -R node:node /devnet /devnet-secrets && chmod 700 /devnet-secrets/*
USER node
ENV DEVNET_HOST=0.0.0.0 DEVNET_STACK_FILE=/devnet/chains.json DEVNET_SECRETS_DIR=/devnet-secrets
EXPOSE 8545 8546 8547
# Healthy once the chains file is written (every chain deployed and seeded).
HEALTHCHECK --interval=5s --timeout=3s --start-period=60s --retries=3 CMD ["node", "-e", "require('fs').accessSync(process.env.DEVNET_STACK_FILE)"]
CMD ["node", "packages/devnet/dist/cli.js"]
LABEL org.opencontainers.image.title="pmm-quote-devnet" \
      org.opencontainers.image.description="Three local devnet chains (8453, 56, 4663) for trying the PMM quote service; devnet-only keys" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.base.name="docker.io/library/node:24-bookworm-slim"

# ---- operator: docker run --rm -e REDIS_URL -e CONFIG_FILE pmm-operator settle.js --month 2026-10 ----
FROM build AS prune-operator
COPY scripts/docker/assemble-image.sh /usr/local/bin/assemble-image
RUN assemble-image /out/operator '{./packages/operator}...' packages/protocol packages/core packages/operator

FROM base AS operator
ENV NODE_ENV=production
WORKDIR /app/packages/operator/dist
COPY --from=prune-operator /out/operator /app/
# Each command by its name in the working folder, as compose, the chart and the runbooks run it
# (`node risk.js …`, `settle.js …`): a link to its entry point in its command's folder.
RUN ln -s audit/audit.js audit.js && ln -s settle/settle.js settle.js \
 && ln -s markouts/markouts.js markouts.js && ln -s fills/fills.js fills.js && ln -s risk/risk.js risk.js
# Where its secrets folder is mounted (its Redis user's password under compose), as in runtime.
RUN mkdir -p /run/secrets/pmm && chown node:node /run/secrets/pmm && chmod 700 /run/secrets/pmm
USER node
# The command is audit.js <command>, settle.js <options>, markouts.js <options>, fills.js <options> or risk.js <command>.
ENTRYPOINT ["node"]
CMD ["settle.js", "help"]
LABEL org.opencontainers.image.title="pmm-operator" \
      org.opencontainers.image.description="The PMM quote service's operator commands: audit, settle, markouts, fills and risk (no keys)" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.base.name="docker.io/library/node:24-bookworm-slim"

# ---- lb: HAProxy in front of the gateway replicas under compose (docker-compose.yml `lb`) -------
FROM base AS lb
# Debian's HAProxy (bookworm: the 2.6 LTS series, with Debian's security updates), on the same
# base as every image here: it builds wherever the services build (a registry mirror, a local
# stand-in) and is updated with them (docs/decisions/0051-scaling-the-gateway-under-compose-haproxy-in-front.md).
RUN apt-get update && apt-get install -y --no-install-recommends haproxy \
 && rm -rf /var/lib/apt/lists/*
COPY deploy/compose/haproxy.cfg /etc/haproxy/haproxy.cfg
USER node
EXPOSE 8080
# Healthy once HAProxy answers its own monitor URI (loopback port 8405).
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:8405/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["haproxy", "-db", "-f", "/etc/haproxy/haproxy.cfg"]
LABEL org.opencontainers.image.title="pmm-quote-lb" \
      org.opencontainers.image.description="HAProxy in front of the PMM quote service's gateway replicas (docker compose)" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.base.name="docker.io/library/node:24-bookworm-slim"

# ---- runtime ----------------------------------------------------------------------------------
FROM base AS runtime
# --max-semi-space-size: see packages/core/src/service/node-runtime.ts (SERVICE_NODE_FLAGS).
ENV NODE_ENV=production HOST=0.0.0.0 NODE_OPTIONS=--max-semi-space-size=32
WORKDIR /app
# Owned by root, run as `node`: the service cannot modify its own code.
COPY --from=prune /out/runtime ./
# Where each service's own secrets folder is mounted (its SECRETS_DIR in docker-compose.yml);
# the node user's and owner-only, which a named volume copies on first use. The same for the
# Redis users' passwords and the ACL file rendered from them (compose's redis-acl step; the
# file, password hashes only, is read by Redis's own user).
RUN mkdir -p /run/secrets/pmm /run/secrets/redis-users /run/redis-acl \
 && chown node:node /run/secrets/pmm /run/secrets/redis-users /run/redis-acl \
 && chmod 700 /run/secrets/pmm /run/secrets/redis-users && chmod 755 /run/redis-acl
USER node
EXPOSE 8080 8081 8090 9080
# /readyz of whichever service runs: OPS_PORT when set (gateway), else PORT.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 CMD ["node", "packages/core/dist/service/container-healthcheck.js"]
# Overridden per service in docker-compose.yml.
CMD ["node", "services/gateway/dist/main.js"]
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="pmm-quote-service" \
      org.opencontainers.image.description="Swap-quote signing and per-block orderbook API (gateway, signer, indexer)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.base.name="docker.io/library/node:24-bookworm-slim"
