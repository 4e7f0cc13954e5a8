import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { attachFiles } from "../../src/terminal/Attachments"

const project = () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-attach-")))
  fs.writeFileSync(path.join(dir, "a.txt"), "alpha\n")
  return dir
}

describe("@file mentions of a question", () => {
  it.effect("drop the punctuation that ends a sentence after them", () =>
    Effect.gen(function*() {
      const attached = yield* attachFiles(project(), "what is in @a.txt?) and (@a.txt).")
      expect(attached).toMatchObject({ _tag: "Ready", files: ["a.txt"] })
    }))

  // a million `)` inside a word took the regular expression that trimmed them minutes
  it.effect("read a word with a million punctuation marks inside at once", () =>
    Effect.gen(function*() {
      const word = `b${")".repeat(1_000_000)}c`
      const attached = yield* attachFiles(project(), `see @a.txt and @${word}.`)
      expect(attached._tag).toBe("Problem")
      if (attached._tag === "Problem") expect(attached.line.startsWith(`@${word}:`)).toBe(true)
      const trailing = yield* attachFiles(project(), `see @a.txt${".".repeat(1_000_000)}`)
      expect(trailing).toMatchObject({ _tag: "Ready", files: ["a.txt"] })
    }))
})
