import type * as ChildProcesses from "node:child_process"

/**
 * Node's `child_process`, loaded when the first command runs rather than at start-up: loading
 * it (with the `net` and `dgram` parts it pulls in) was about 2.5 ms of the time to the banner
 * under `node --cpu-prof`, and the banner runs no command.
 */
let childProcesses: typeof ChildProcesses | undefined

export const nodeChildProcesses =
  (): typeof ChildProcesses => (childProcesses ??= require("node:child_process") as typeof ChildProcesses)
