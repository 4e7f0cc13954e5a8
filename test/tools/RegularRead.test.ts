import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"

import { readRegularFile } from "../../src/tools/RegularRead"

const dir = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-regular-")))

describe("readRegularFile", () => {
  it.effect("reads a regular file whole, through a link too", () =>
    Effect.gen(function*() {
      const d = dir()
      fs.writeFileSync(path.join(d, "a.txt"), "alpha\n")
      fs.symlinkSync("a.txt", path.join(d, "link"))
      expect(yield* readRegularFile(path.join(d, "a.txt"), 100)).toEqual(Either.right(Buffer.from("alpha\n")))
      expect(yield* readRegularFile(path.join(d, "link"), 100)).toEqual(Either.right(Buffer.from("alpha\n")))
    }))

  it.effect("refuses a FIFO, a device, a link to one, a directory and a missing file without opening them", () =>
    Effect.gen(function*() {
      const d = dir()
      execFileSync("mkfifo", [path.join(d, "pipe")])
      fs.symlinkSync("/dev/zero", path.join(d, "zero"))
      fs.symlinkSync("pipe", path.join(d, "to-pipe"))
      const refusal = (name: string) => Effect.map(readRegularFile(path.join(d, name), 100), Either.getLeft)
      expect(yield* refusal("pipe")).toMatchObject({ value: { _tag: "NotRegular", kind: "a named pipe (FIFO)" } })
      expect(yield* refusal("to-pipe")).toMatchObject({ value: { _tag: "NotRegular", kind: "a named pipe (FIFO)" } })
      expect(yield* refusal("zero")).toMatchObject({ value: { _tag: "NotRegular", kind: "a character device" } })
      expect(yield* refusal(".")).toMatchObject({ value: { _tag: "Directory" } })
      expect(yield* refusal("nothing")).toMatchObject({ value: { _tag: "Missing" } })
    }))

  it.effect("refuses a file over the cap from its size, before reading", () =>
    Effect.gen(function*() {
      const d = dir()
      fs.writeFileSync(path.join(d, "big"), "x".repeat(1001))
      expect(yield* readRegularFile(path.join(d, "big"), 1000)).toEqual(Either.left({ _tag: "TooBig", size: 1001 }))
    }))

  it.effect("can be interrupted in the middle of a read, and the file is closed", () =>
    Effect.gen(function*() {
      const d = dir()
      const file = path.join(d, "large")
      fs.writeFileSync(file, Buffer.alloc(64 * 1024 * 1024, 97))
      const fiber = yield* Effect.fork(readRegularFile(file, 128 * 1024 * 1024))
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      // the descriptor is closed once the read in flight ends: nothing of mm holds the file
      const held = () =>
        fs.readdirSync("/proc/self/fd").some((fd) => {
          try {
            return fs.readlinkSync(`/proc/self/fd/${fd}`) === file
          } catch {
            return false
          }
        })
      while (held()) yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
    }))
})
