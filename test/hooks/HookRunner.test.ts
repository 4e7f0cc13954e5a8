import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { runHookCommand } from "../../src/hooks/HookRunner"
import { tempDir } from "../support/processes"

const run = (command: string, timeoutSeconds = 30) => {
  const cwd = tempDir("mm-hook-run-")
  return runHookCommand({ command, stdin: "{}", cwd, timeoutSeconds, projectDir: cwd })
}

describe("one hook command", () => {
  it.live("is answered once it exits, though what it left in the background holds its output open", () =>
    Effect.gen(function*() {
      // the sleep keeps the hook's stdout open long after the hook itself has exited
      const answer = yield* run("sleep 60 & echo $!; echo done", 50)
      expect(answer._tag).toBe("Exited")
      if (answer._tag !== "Exited") return
      expect(answer.code).toBe(0)
      const [pid, said] = answer.stdout.trim().split("\n")
      expect(said).toBe("done")
      process.kill(Number(pid), "SIGKILL")
    }))

  it.live("that Node refuses outright (a NUL in it) is one reason, not a crash", () =>
    Effect.gen(function*() {
      const answer = yield* run("echo a\u0000b")
      expect(answer._tag).toBe("NotStarted")
    }))
})
