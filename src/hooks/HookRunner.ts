/**
 * One hook command run: `bash -c COMMAND` (or `sh`) as the user, outside the sandbox, in the
 * project, in a process group of its own that is killed at its timeout, when the turn is
 * cancelled, or when mm exits. Its stdin is the event's JSON; what it printed and its exit
 * code are the answer.
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process"

import * as Effect from "effect/Effect"

import { nodeChildProcesses } from "../lib/NodeModules"
import { forgetGroup, killGroup, killGroupOnExit } from "../lib/ProcessGroups"
import { programPath } from "../lib/Programs"

/** How one command ended. */
export type HookRun =
  | { readonly _tag: "Exited"; readonly code: number; readonly stdout: string; readonly stderr: string }
  | { readonly _tag: "TimedOut"; readonly seconds: number }
  | { readonly _tag: "NotStarted"; readonly reason: string }

/** Characters of stdout and of stderr kept; the rest is dropped. */
const MAX_OUTPUT = 1024 * 1024

/** The longest a Node timer waits (a longer one fires at once): some 24 days. */
const MAX_TIMER_MS = 2 ** 31 - 1
/** How long a hook's output is still read once it has exited (what it started may hold the pipe). */
const EXIT_GRACE_MS = 500

export interface HookCommand {
  readonly command: string
  readonly stdin: string
  readonly cwd: string
  readonly timeoutSeconds: number
  /** The project, given to the command as `CLAUDE_PROJECT_DIR` and `MM_PROJECT_DIR`. */
  readonly projectDir: string
}

/** bash when it is on PATH (Claude Code's hooks are written for it), else the POSIX shell. */
const shellOf = (cwd: string): string => {
  const bash = programPath("bash", [cwd])
  return bash.includes("/") ? bash : "/bin/sh"
}

/** Runs one hook command to its end or its timeout; never fails. */
export const runHookCommand = (hook: HookCommand): Effect.Effect<HookRun> =>
  Effect.async<HookRun>((resume) => {
    let done = false
    const settle = (run: HookRun) => {
      if (done) return
      done = true
      clearTimeout(timer)
      if (child.pid !== undefined) forgetGroup(child.pid)
      resume(Effect.succeed(run))
    }
    let child: ChildProcessWithoutNullStreams
    try {
      child = nodeChildProcesses().spawn(shellOf(hook.cwd), ["-c", hook.command], {
        cwd: hook.cwd,
        env: { ...process.env, CLAUDE_PROJECT_DIR: hook.projectDir, MM_PROJECT_DIR: hook.projectDir },
        detached: true,
        stdio: ["pipe", "pipe", "pipe"]
      })
    } catch (error) {
      // a command Node refuses outright (a NUL in it) throws here rather than emitting "error"
      done = true
      resume(Effect.succeed({ _tag: "NotStarted", reason: error instanceof Error ? error.message : String(error) }))
      return
    }
    if (child.pid !== undefined) killGroupOnExit(child.pid)
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8")
    child.stderr.setEncoding("utf8")
    child.stdout.on("data", (text: string) => {
      if (stdout.length < MAX_OUTPUT) stdout += text.slice(0, MAX_OUTPUT - stdout.length)
    })
    child.stderr.on("data", (text: string) => {
      if (stderr.length < MAX_OUTPUT) stderr += text.slice(0, MAX_OUTPUT - stderr.length)
    })
    // a hook that does not read its stdin closes the pipe early: that is no failure
    child.stdin.on("error", () => {})
    child.stdin.end(hook.stdin)
    child.on("error", (error) => settle({ _tag: "NotStarted", reason: error.message }))
    const exited = (code: number | null, signal: NodeJS.Signals | null) =>
      settle({ _tag: "Exited", code: code ?? (signal === null ? 1 : 128), stdout, stderr })
    child.on("close", exited)
    // something the hook left running in the background may hold its output open: once the
    // hook itself has exited, what it printed is taken after a short grace, and the rest left
    child.on("exit", (code, signal) => {
      const grace = setTimeout(() => {
        if (child.pid !== undefined) forgetGroup(child.pid)
        child.stdout.destroy()
        child.stderr.destroy()
        exited(code, signal)
      }, EXIT_GRACE_MS)
      grace.unref()
      child.once("close", () => clearTimeout(grace))
    })
    const timer = setTimeout(() => {
      killGroup(child.pid, "SIGKILL")
      settle({ _tag: "TimedOut", seconds: hook.timeoutSeconds })
    }, Math.min(hook.timeoutSeconds * 1000, MAX_TIMER_MS))
    return Effect.sync(() => {
      clearTimeout(timer)
      if (!done) killGroup(child.pid, "SIGKILL")
      if (child.pid !== undefined) forgetGroup(child.pid)
    })
  })
