/**
 * Ending a command-line process without losing its output. `process.exit()` does not wait for
 * stdout: through a pipe to a slow reader (`audit export | gzip`), whatever the pipe has not
 * taken yet is dropped, and the exit code still says 0. The operator commands end here instead:
 * once stdout and stderr have handed everything to the reader, or with a non-zero code when
 * they cannot (the reader went away: EPIPE; an EPIPE during the command is an unhandled
 * 'error' event, which exits non-zero too).
 */

/** Resolves once everything written to `stream` so far is flushed; false when it failed. */
function flushed(stream: NodeJS.WriteStream): Promise<boolean> {
  if (stream.destroyed || stream.writableEnded) return Promise.resolve(!stream.errored);
  return new Promise((resolve) => {
    const onError = () => resolve(false);
    stream.once('error', onError);
    // Writes are flushed in order: the callback of an empty write runs after every earlier one.
    stream.write('', (err) => {
      stream.off('error', onError);
      resolve(!err);
    });
  });
}

/** Exits with `code` once stdout and stderr are flushed; with 1 (if `code` was 0) when they could not be. */
export async function exitWhenWritten(code: number): Promise<never> {
  const ok = (await flushed(process.stdout)) && (await flushed(process.stderr));
  process.exit(ok || code !== 0 ? code : 1);
}
