import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"

import { keyOf, MEMO_ENTRIES, MEMO_FILE, recall, remember } from "../../src/config/ConfigMemo"
import { parseConfig } from "../../src/config/ConfigParse"
import type { AgentConfig } from "../../src/config/ConfigSchema"

const tempCache = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mm-config-memo-")), "mm")

const decoded = (text: string): AgentConfig => {
  const result = parseConfig(text, "agent.yaml")
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right
}

const text = (name: string, extra = "") => `model:\n  url: http://127.0.0.1:8080/v1\n  name: ${name}\n${extra}`

const memoOf = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, MEMO_FILE), "utf8"))

describe("ConfigMemo", () => {
  it("gives back what this build decoded from the very same text, and nothing for any other", () => {
    const dir = tempCache()
    const first = text("one")
    remember(keyOf(first), "stamp-a", decoded(first), dir)

    expect(recall(keyOf(first), "stamp-a", dir)).toEqual(decoded(first))
    expect(recall(keyOf(text("two")), "stamp-a", dir)).toBeUndefined()
    // one character more: another text
    expect(recall(keyOf(`${first}\n`), "stamp-a", dir)).toBeUndefined()
    // another build never trusts it
    expect(recall(keyOf(first), "stamp-b", dir)).toBeUndefined()
    // no agent.yaml is a key of its own
    expect(recall(keyOf(undefined), "stamp-a", dir)).toBeUndefined()
  })

  it("keeps the file 0600 in a 0700 directory, each entry under a hash of its text", () => {
    const dir = tempCache()
    const first = text("one", "system: a prompt of its own\n")
    remember(keyOf(first), "stamp-a", decoded(first), dir)
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
    expect(fs.statSync(path.join(dir, MEMO_FILE)).mode & 0o777).toBe(0o600)
    const memo = memoOf(dir)
    expect(memo.entries.map((entry: { stamp: string; key: string }) => [entry.stamp, entry.key])).toEqual([
      ["stamp-a", keyOf(first)]
    ])
    expect(keyOf(first)).toMatch(/^[0-9a-f]{32}-[0-9a-z]+$/)
    // no temporary file is left beside it
    expect(fs.readdirSync(dir)).toEqual([MEMO_FILE])
  })

  it("never keeps a configuration that may hold a credential", () => {
    const dir = tempCache()
    const risky = [
      text("h", "  headers:\n    X-Api-Key: secret\n"),
      text("b", "  extraBody:\n    api_key: secret\n"),
      "model:\n  url: http://user:secret@127.0.0.1:8080/v1\n",
      "model:\n  url: http://127.0.0.1:8080/v1?key=secret\n",
      "mcpServers:\n  files:\n    command: mcp-files\n    args: [--token, secret]\n"
    ]
    for (const yaml of risky) {
      remember(keyOf(yaml), "stamp-a", decoded(yaml), dir)
      expect(recall(keyOf(yaml), "stamp-a", dir), yaml).toBeUndefined()
    }
    expect(fs.existsSync(path.join(dir, MEMO_FILE))).toBe(false)
  })

  it("never keeps what JSON would change", () => {
    const dir = tempCache()
    const yaml = text("one")
    remember(keyOf(yaml), "stamp-a", { ...decoded(yaml), maxSteps: Number.POSITIVE_INFINITY }, dir)
    expect(recall(keyOf(yaml), "stamp-a", dir)).toBeUndefined()
  })

  it("keeps the last few, newest first, of every build", () => {
    const dir = tempCache()
    // two checkouts of different builds, run in turn, each find theirs
    remember(keyOf(text("a")), "stamp-a", decoded(text("a")), dir)
    remember(keyOf(text("a")), "stamp-b", { ...decoded(text("a")), maxSteps: 7 }, dir)
    expect(recall(keyOf(text("a")), "stamp-a", dir)?.maxSteps).toBe(50)
    expect(recall(keyOf(text("a")), "stamp-b", dir)?.maxSteps).toBe(7)

    const names = Array.from({ length: MEMO_ENTRIES }, (_, i) => `model-${i}`)
    for (const name of names) remember(keyOf(text(name)), "stamp-a", decoded(text(name)), dir)
    const keys = memoOf(dir).entries.map((entry: { key: string }) => entry.key)
    expect(keys).toEqual(names.slice().reverse().map((name) => keyOf(text(name))))
    expect(recall(keyOf(text("a")), "stamp-a", dir)).toBeUndefined()
    expect(recall(keyOf(text("model-0")), "stamp-a", dir)?.model.name).toBe("model-0")
  })

  it("a damaged or foreign file is no answer, and the next write replaces it", () => {
    const dir = tempCache()
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const file = path.join(dir, MEMO_FILE)
    const yaml = text("one")
    const damaged = [
      "{ not json",
      "null",
      "[]",
      JSON.stringify({ version: 9, entries: [{ stamp: "stamp-a", key: keyOf(yaml), config: decoded(yaml) }] }),
      JSON.stringify({ version: 2, entries: "all" }),
      JSON.stringify({ version: 2, entries: [{ stamp: "stamp-a", key: keyOf(yaml), config: "not an object" }] }),
      JSON.stringify({ version: 2, entries: [{ stamp: "stamp-a", key: 7, config: decoded(yaml) }] }),
      JSON.stringify({ version: 2, entries: [{ key: keyOf(yaml), config: decoded(yaml) }] }),
      // what JSON.parse makes an own property, and an object would take as its prototype
      `{"version":2,"entries":[{"stamp":"stamp-a","key":"${keyOf(yaml)}","config":{"__proto__":{"model":{}}}}]}`
    ]
    for (const body of damaged) {
      fs.writeFileSync(file, body)
      expect(recall(keyOf(yaml), "stamp-a", dir), body).toBeUndefined()
    }
    remember(keyOf(yaml), "stamp-a", decoded(yaml), dir)
    expect(recall(keyOf(yaml), "stamp-a", dir)).toEqual(decoded(yaml))
  })

  it("a cache directory that cannot be written costs nothing but the memo", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "mm-config-memo-"))
    const blocked = path.join(root, "file")
    fs.writeFileSync(blocked, "")
    const yaml = text("one")
    expect(() => remember(keyOf(yaml), "stamp-a", decoded(yaml), path.join(blocked, "mm"))).not.toThrow()
    expect(recall(keyOf(yaml), "stamp-a", path.join(blocked, "mm"))).toBeUndefined()
  })
})
