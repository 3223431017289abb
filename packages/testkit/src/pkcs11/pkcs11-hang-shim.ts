/**
 * A PKCS#11 module that hangs on demand, for the tests of a module call that never returns: a
 * small C library, built here with the machine's gcc, that hands out SoftHSM2's own function
 * table with C_Sign wrapped. While the trigger file names a token's label, every C_Sign on a
 * session of that token waits (on the libuv thread that runs it) until the file is removed or
 * names another token; every other call, and signs on other tokens, go straight to SoftHSM2.
 *
 * Real parts: the signer loads it like any vendor module, SoftHSM2 does the work, and the hang
 * is a native call that does not return, which is what a stuck HSM client does. Without gcc
 * the tests fail (with the install command), never skip.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const SOURCE = String.raw`
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <pkcs11/pkcs11.h>

static CK_FUNCTION_LIST shim;
static CK_FUNCTION_LIST_PTR real;

/* The label of the token whose signs hang now ("" when none). */
static void hanging_label(char *out, size_t size) {
  out[0] = 0;
  FILE *f = fopen(HANG_FILE, "r");
  if (!f) return;
  size_t n = fread(out, 1, size - 1, f);
  fclose(f);
  out[n] = 0;
}

static int session_hangs(CK_SESSION_HANDLE session) {
  char wanted[64];
  hanging_label(wanted, sizeof wanted);
  if (!wanted[0]) return 0;
  CK_SESSION_INFO info;
  CK_TOKEN_INFO token;
  if (real->C_GetSessionInfo(session, &info) != CKR_OK) return 0;
  if (real->C_GetTokenInfo(info.slotID, &token) != CKR_OK) return 0;
  size_t n = strlen(wanted);
  return n <= sizeof token.label && memcmp(token.label, wanted, n) == 0;
}

static CK_RV hanging_sign(CK_SESSION_HANDLE session, CK_BYTE_PTR data, CK_ULONG length, CK_BYTE_PTR signature,
                          CK_ULONG_PTR signatureLength) {
  while (session_hangs(session)) usleep(10000);
  return real->C_Sign(session, data, length, signature, signatureLength);
}

CK_RV C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR out) {
  if (!real) {
    void *lib = dlopen(TARGET, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return CKR_GENERAL_ERROR;
    CK_C_GetFunctionList get = (CK_C_GetFunctionList)dlsym(lib, "C_GetFunctionList");
    if (!get) return CKR_GENERAL_ERROR;
    CK_RV rv = get(&real);
    if (rv != CKR_OK) return rv;
    shim = *real;
    shim.C_Sign = hanging_sign;
  }
  *out = &shim;
  return CKR_OK;
}
`;

export interface HangingModule {
  /** The shim's shared library: a module path for a PKCS#11 URI. */
  modulePath: string;
  /** From now on, C_Sign on the token labelled `token` does not return. */
  hang(token: string): void;
  /** Lets every hanging C_Sign go on (it then signs). */
  release(): void;
  /** Releases and deletes the build. */
  remove(): void;
}

/** Builds the shim over the module `target` (SoftHSM2's library). Throws when gcc is missing. */
export function buildHangingModule(target: string): HangingModule {
  const dir = mkdtempSync(path.join(tmpdir(), 'pmm-pkcs11-shim-'));
  const source = path.join(dir, 'hang-shim.c');
  const trigger = path.join(dir, 'hang');
  const modulePath = path.join(dir, 'libhang-shim.so');
  writeFileSync(source, SOURCE);
  // The PKCS#11 headers of the binding the signer uses (pkcs11js, core's dependency, ships the standard's).
  const core = path.dirname(require.resolve('@pmm/core/package.json'));
  const includes = path.join(path.dirname(require.resolve('pkcs11js/package.json', { paths: [core] })), 'includes');
  try {
    execFileSync(
      'gcc',
      [
        '-shared',
        '-fPIC',
        '-O1',
        `-I${includes}`,
        `-DTARGET=${JSON.stringify(target)}`,
        `-DHANG_FILE=${JSON.stringify(trigger)}`,
        '-o',
        modulePath,
        source,
        '-ldl',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
  } catch (err) {
    const detail = (err as { stderr?: Buffer }).stderr?.toString() ?? String(err);
    throw new Error(`cannot build the hanging PKCS#11 shim with gcc (apt-get install gcc libc6-dev): ${detail}`);
  }
  const release = () => rmSync(trigger, { force: true });
  return {
    modulePath,
    hang: (token) => writeFileSync(trigger, token),
    release,
    remove: () => {
      release();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
