/**
 * The container image's HEALTHCHECK (`node packages/core/dist/service/container-healthcheck.js`):
 * exits 0 when the service in this container answers /readyz with 2xx, else 1. The port is
 * OPS_PORT when set (the gateway's operator port), else PORT (signer, indexer). Not exported
 * from the package: it is a program, run by the container engine.
 */
const port = process.env.OPS_PORT || process.env.PORT || '8080';
fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2_500) }).then(
  (res) => process.exit(res.ok ? 0 : 1),
  () => process.exit(1),
);
