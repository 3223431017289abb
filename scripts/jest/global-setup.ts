// Jest's global set-up: what must exist in jest's own process before any test file runs.
import { createSoftHsmRunFolder } from '../../packages/testkit/src/pkcs11/softhsm-run-folder';

export default function globalSetup(): void {
  createSoftHsmRunFolder();
}
