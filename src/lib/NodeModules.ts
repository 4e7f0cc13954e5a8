import type * as ChildProcesses from "node:child_process"
import type * as Crypto from "node:crypto"
import type * as Readline from "node:readline"

/**
 * Node's `child_process`, loaded when the first command runs rather than at start-up: loading
 * it (with the `net` and `dgram` parts it pulls in) was about 2.5 ms of the time to the banner
 * under `node --cpu-prof`, and the banner runs no command.
 */
let childProcesses: typeof ChildProcesses | undefined

export const nodeChildProcesses =
  (): typeof ChildProcesses => (childProcesses ??= require("node:child_process") as typeof ChildProcesses)

/**
 * Node's `crypto`, loaded at its first use (a checkpoint's hash, a long MCP tool name): loading
 * it was about 2.7 ms of every start, before the banner and before the first request.
 */
let crypto: typeof Crypto | undefined

export const nodeCrypto = (): typeof Crypto => (crypto ??= require("node:crypto") as typeof Crypto)

/**
 * Node's `readline`, loaded when the terminal first reads a key or a line, after the banner
 * (with its own modules, about 0.5 ms).
 */
let readline: typeof Readline | undefined

export const nodeReadline = (): typeof Readline => (readline ??= require("node:readline") as typeof Readline)
