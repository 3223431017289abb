/**
 * The operator image (the Dockerfile's `operator` stage) as compose and the chart run it: its
 * working folder, and the commands it holds there by name (`node risk.js`, `settle.js …`), each a
 * link to the entry point in its command's folder (packages/operator/dist/risk/risk.js).
 */
import { readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');

/** The `operator` stage of the Dockerfile, up to the next stage. */
function operatorStage(): string {
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  return /^FROM base AS operator$[^]*?(?=^FROM |$(?![^]))/m.exec(dockerfile)![0];
}

/** The image's working folder, relative to /app (its WORKDIR). */
export function operatorWorkdir(): string {
  return /^WORKDIR \/app\/(\S+)$/m.exec(operatorStage())![1]!;
}

/** Each link the stage makes in its working folder (`ln -s <target> <name>`): name → target, relative to that folder. */
export function operatorLinks(): Map<string, string> {
  return new Map([...operatorStage().matchAll(/\bln -s (\S+) (\S+)/g)].map((m) => [m[2]!, m[1]!]));
}

/** What `node <script>` runs in the image, relative to the repository: the link's target for a linked name. */
export function operatorProgram(script: string): string {
  return path.posix.join(operatorWorkdir(), operatorLinks().get(script) ?? script);
}

/**
 * Makes `folder` the image's working folder for a command run from the checkout: each of its links,
 * to the built file in the repository (`npm run build`). Returns `folder`.
 */
export function linkOperatorWorkdir(folder: string): string {
  for (const [name, target] of operatorLinks())
    symlinkSync(path.join(ROOT, operatorWorkdir(), target), path.join(folder, name));
  return folder;
}
