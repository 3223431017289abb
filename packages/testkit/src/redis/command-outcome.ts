/**
 * What a command came to, for tests of who may do what: 'ok', or the first word of its error
 * (Redis's error code: NOPERM, WRONGPASS, NOAUTH, ...).
 */
export async function commandOutcome(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
    return 'ok';
  } catch (err) {
    return String((err as Error).message).split(' ')[0]!;
  }
}
