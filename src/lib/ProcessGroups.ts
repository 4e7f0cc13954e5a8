/**
 * Processes mm started that must not outlive it: bash's process groups (src/tools/Bash.ts)
 * and local MCP servers (src/mcp/McpSdk.ts). If mm exits while one still runs, one exit
 * hook kills it with SIGKILL.
 */

/** What `process.kill` is given for each one: `-pid` for a process group, `pid` for a lone process. */
const live = new Set<number>()
let exitHookInstalled = false

const kill = (target: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(target, signal)
  } catch {
    // gone already
  }
}

const installExitHook = (): void => {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.once("exit", () => {
    for (const target of live) kill(target, "SIGKILL")
  })
}

/** Sends `signal` to the process group led by `pid`, if there is one still. */
export const killGroup = (pid: number | undefined, signal: NodeJS.Signals): void => {
  if (pid === undefined) return
  kill(-pid, signal)
}

/** Until `forgetGroup(pid)`, the process group led by `pid` is killed if mm exits. */
export const killGroupOnExit = (pid: number): void => {
  installExitHook()
  live.add(-pid)
}

export const forgetGroup = (pid: number): void => {
  live.delete(-pid)
}

/** Until `forgetProcess(pid)`, the process `pid` (alone, not its group) is killed if mm exits. */
export const killProcessOnExit = (pid: number): void => {
  installExitHook()
  live.add(pid)
}

export const forgetProcess = (pid: number): void => {
  live.delete(pid)
}
