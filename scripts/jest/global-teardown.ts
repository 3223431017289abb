// Jest's global tear-down: removes what global-setup.ts made.
import { removeSoftHsmRunFolder } from '../../packages/testkit/src/pkcs11/softhsm-run-folder';

export default function globalTeardown(): void {
  removeSoftHsmRunFolder();
}
