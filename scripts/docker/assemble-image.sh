#!/bin/sh
# Used by the Dockerfile's prune stage (inside the build container, at /app): leaves in <out>
# only what an image runs, i.e. package.json and dist/ (plus the OpenAPI document, the gateway's
# operator console page (console/), the Redis
# Lua scripts (commands/), the build's copy of Redoc's bundle for /docs (the gateway's assets/) and the
# devnet's Hardhat files) of the named projects, and the production dependencies of the
# projects matched by <filter> (pnpm --filter syntax: '{./dir}...' is the project in ./dir and the
# workspace packages it depends on).
#   assemble-image.sh <out> <filter> <project>...
set -eu
out=$1 filter=$2
shift 2
rm -rf node_modules packages/*/node_modules services/*/node_modules
pnpm install --frozen-lockfile --prod --offline --filter "$filter" >/dev/null
mkdir -p "$out"
cp -a package.json pnpm-workspace.yaml node_modules "$out/"
for p in "$@"; do
  mkdir -p "$out/$p"
  for f in package.json dist node_modules openapi console commands assets hardhat hardhat.config.js; do
    if [ -e "$p/$f" ]; then cp -a "$p/$f" "$out/$p/"; fi
  done
done
find "$out" -name '*.tsbuildinfo' -delete
find "$out" -path '*/dist/*' -name '*.map' -delete
