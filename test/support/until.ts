/**
 * Waits until `check` holds, looking every 10 ms, and fails with `what` after `timeoutMs`: the
 * way a test waits for something that happens in another process or in the background, without
 * a fixed sleep and without hanging until the test's own timeout when it never comes.
 */
export const until = async (check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
