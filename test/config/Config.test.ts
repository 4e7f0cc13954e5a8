import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { findConfigFile, loadConfig, MAX_CONFIG_BYTES } from "../../src/config/Config"
import { parseConfig } from "../../src/config/ConfigParse"
import { defaultConfig } from "../../src/config/ConfigSchema"
import { REPO_ROOT } from "../support/paths"

const bad = (text: string) => {
  const result = parseConfig(text, "/p/agent.yaml")
  if (Either.isRight(result)) throw new Error("expected a ConfigError")
  return result.left.message
}

describe("configuration", () => {
  it("has every default of the contract", () => {
    expect(defaultConfig().model).toEqual({
      api: "chat",
      url: "http://127.0.0.1:11434/v1",
      name: "qwen2.5-coder:7b",
      textToolCalls: true,
      maxAnswerBytes: 4194304
    })
    expect(defaultConfig().watchdogTimeout).toBe(120)
    expect(defaultConfig().maxOutput).toBe(16000)
    expect(defaultConfig().maxSteps).toBe(50)
    expect(defaultConfig().permissions).toBe("ask")
    expect(defaultConfig().compaction).toEqual({ auto: true, threshold: 0.8, keepTurns: 2 })
    expect(defaultConfig().sessions).toEqual({ enabled: true, dir: ".mm/sessions", recap: 3 })
    expect(defaultConfig().skills.dirs).toEqual([".mm/skills", "~/.mm/skills"])
    expect(defaultConfig().system.length).toBeGreaterThan(20)
  })

  it("decodes a full file, with durations as strings", () => {
    const text = [
      "model:",
      "  url: http://localhost:8080/v1",
      "  name: llama",
      "  apiKeyEnv: MY_KEY",
      "  contextWindow: 8192",
      "system: be brief",
      "watchdogTimeout: \"2m\"",
      "maxOutput: 500",
      "maxSteps: 3",
      "permissions: allow",
      "compaction: { auto: false, threshold: 0.5, keepTurns: 1 }",
      "sessions: { enabled: true, dir: /tmp/s }",
      "skills: { dirs: [a, b] }"
    ].join("\n")
    const config = Either.getOrThrow(parseConfig(text, "agent.yaml"))
    expect(config.model).toEqual({
      api: "chat",
      url: "http://localhost:8080/v1",
      name: "llama",
      apiKeyEnv: "MY_KEY",
      contextWindow: 8192,
      textToolCalls: true,
      maxAnswerBytes: 4194304
    })
    expect(config.watchdogTimeout).toBe(120)
    expect(config.permissions).toBe("allow")
    expect(config.compaction).toEqual({ auto: false, threshold: 0.5, keepTurns: 1 })
    expect(config.sessions).toEqual({ enabled: true, dir: "/tmp/s", recap: 3 })
    expect(config.skills.dirs).toEqual(["a", "b"])
    expect(Either.getOrThrow(parseConfig("watchdogTimeout: \"90s\"", "f")).watchdogTimeout).toBe(90)
    expect(Either.getOrThrow(parseConfig("watchdogTimeout: 1.5", "f")).watchdogTimeout).toBe(1.5)
    expect(Either.getOrThrow(parseConfig("watchdogTimeout: \"500ms\"", "f")).watchdogTimeout).toBe(0.5)
  })

  it("model.api picks the provider's address when no url is written, and keeps a written one", () => {
    const anthropic = Either.getOrThrow(parseConfig("model:\n  api: anthropic\n  name: claude-sonnet-4-5\n", "f"))
    expect(anthropic.model).toMatchObject({ api: "anthropic", url: "https://api.anthropic.com/v1" })
    const responses = Either.getOrThrow(parseConfig("model:\n  api: responses\n", "f"))
    expect(responses.model.url).toBe("https://api.openai.com/v1")
    const proxied = Either.getOrThrow(parseConfig("model:\n  api: anthropic\n  url: http://127.0.0.1:9/v1\n", "f"))
    expect(proxied.model.url).toBe("http://127.0.0.1:9/v1")
    expect(bad("model:\n  api: gemini\n")).toMatch(/^\/p\/agent\.yaml: model\.api.*"chat".*"responses".*"anthropic"/)
  })

  it("model.thinking takes a level or a budget in tokens", () => {
    expect(Either.getOrThrow(parseConfig("model:\n  thinking: high\n", "f")).model.thinking).toBe("high")
    expect(Either.getOrThrow(parseConfig("model:\n  thinking: 4096\n", "f")).model.thinking).toBe(4096)
    expect(bad("model:\n  thinking: lots\n")).toMatch(/^\/p\/agent\.yaml: model\.thinking/)
    expect(bad("model:\n  thinking: -3\n")).toMatch(/^\/p\/agent\.yaml: model\.thinking/)
  })

  it("an empty file or a file of comments gives the defaults", () => {
    expect(Either.getOrThrow(parseConfig("", "f"))).toEqual(defaultConfig())
    expect(Either.getOrThrow(parseConfig("# nothing\n", "f"))).toEqual(defaultConfig())
    expect(Either.getOrThrow(parseConfig("sessions:\n  enabled: true\n", "f")).sessions.dir).toBe(".mm/sessions")
  })

  it("a YAML syntax error names the file, line and column", () => {
    const message = bad("model:\n  name: [unclosed\n")
    expect(message).toMatch(/^\/p\/agent\.yaml:\d+:\d+: YAML syntax error: /)
    expect(message).not.toContain("\n")
  })

  it("instructions: file names, false, or one clear line", () => {
    expect(defaultConfig().instructions).toEqual(["AGENTS.md"])
    expect(Either.getOrThrow(parseConfig("instructions: false\n", "f")).instructions).toBe(false)
    expect(Either.getOrThrow(parseConfig("instructions: [AGENTS.md, CLAUDE.md]\n", "f")).instructions).toEqual([
      "AGENTS.md",
      "CLAUDE.md"
    ])
    expect(bad("instructions: [docs/RULES.md]\n")).toContain(
      "instructions[0] (line 1, column 16): expected a file name without a directory (such as AGENTS.md), got \"docs/RULES.md\""
    )
    expect(bad("instructions: true\n")).toMatch(/^\/p\/agent\.yaml: instructions \(line 1, column 15\): /)
  })

  it("an unknown key names its path and position", () => {
    expect(bad("model:\n  nmae: x\n")).toBe("/p/agent.yaml: model.nmae (line 2, column 3): unknown key")
    expect(bad("colour: red\n")).toBe("/p/agent.yaml: colour (line 1, column 1): unknown key")
  })

  it("sandbox: a word or a map, both decoded to one shape; anything else is one line naming the key", () => {
    const ok = (text: string) => Either.getOrThrow(parseConfig(text, "/p/agent.yaml")).sandbox
    const limits = { processes: 2048, fileSize: 8192 }
    expect(defaultConfig().sandbox).toEqual({ mode: "auto", network: false, writable: [], env: [], limits })
    expect(defaultConfig().permissions).toBe("ask")
    expect(ok("sandbox: off\n")).toEqual({ mode: "off", network: false, writable: [], env: [], limits })
    expect(ok("sandbox:\n  network: true\n  writable: [~/.cache, build]\n")).toEqual({
      mode: "auto",
      network: true,
      writable: ["~/.cache", "build"],
      env: [],
      limits
    })
    expect(ok("sandbox:\n  env: [GH_TOKEN]\n  limits:\n    processes: 64\n")).toEqual({
      mode: "auto",
      network: false,
      writable: [],
      env: ["GH_TOKEN"],
      limits: { processes: 64, fileSize: 8192 }
    })
    expect(ok("sandbox:\n  mode: on\n")).toMatchObject({ mode: "on" })
    expect(Either.getOrThrow(parseConfig("permissions: auto\n", "/p/agent.yaml")).permissions).toBe("auto")
    expect(bad("sandbox: maybe\n")).toMatch(/^\/p\/agent\.yaml: sandbox \(line 1, column 10\): .*maybe/)
    expect(bad("sandbox:\n  mode: sometimes\n")).toMatch(/sandbox\.mode \(line 2, column 9\): .*sometimes/)
    expect(bad("sandbox:\n  network: yes please\n")).toMatch(/sandbox\.network .*expected a boolean/)
    expect(bad("sandbox:\n  netwrok: true\n")).toMatch(/sandbox\.netwrok \(line 2, column 3\): unknown key/)
    expect(bad("sandbox:\n  env: [MY-TOKEN]\n")).toMatch(/sandbox\.env\[0\] .*expected a variable name .*MY-TOKEN/)
    expect(bad("sandbox:\n  limits:\n    processes: 0\n")).toMatch(/sandbox\.limits\.processes .*from 1, got 0/)
    expect(bad("sandbox:\n  limits:\n    fileSize: 1.5\n")).toMatch(/sandbox\.limits\.fileSize .*whole number of MiB/)
  })

  it("a wrong type or a negative number names the key path", () => {
    expect(bad("watchdogTimeout: -1\n")).toMatch(/^\/p\/agent\.yaml: watchdogTimeout \(line 1, column 18\): .*-1/)
    expect(bad("maxSteps: 0\n")).toContain("maxSteps (line 1, column 11): expected a positive whole number, got 0")
    expect(bad("maxOutput: lots\n")).toMatch(/maxOutput \(line 1, column 12\): expected/)
    expect(bad("permissions: sometimes\n")).toBe(
      "/p/agent.yaml: permissions (line 1, column 14): expected \"ask\", \"auto\" or \"allow\", got \"sometimes\""
    )
    expect(bad("compaction:\n  threshold: 1.5\n")).toMatch(
      /compaction\.threshold \(line 2, column 14\): expected a fraction/
    )
    expect(bad("sessions:\n  enabled: yes please\n")).toMatch(
      /sessions\.enabled .*expected a boolean, got "yes please"/
    )
    expect(bad("watchdogTimeout: \"soon\"\n")).toMatch(/watchdogTimeout .*/)
    expect(bad("model:\n  url: ftp://x/v1\n")).toBe(
      "/p/agent.yaml: model.url (line 2, column 8): expected an http:// or https:// URL, got \"ftp://x/v1\""
    )
    expect(bad("model:\n  url: not a url\n")).toMatch(/model\.url .*expected an http:\/\/ or https:\/\/ URL/)
    expect(bad("sessions:\n")).toBe("/p/agent.yaml: sessions (line 1, column 10): expected a mapping of keys, got null")
    expect(bad("skills: {dirs: [a, 3]}\n")).toBe(
      "/p/agent.yaml: skills.dirs[1] (line 1, column 20): expected a string, got 3"
    )
    expect(bad("watchdogTimeout: \"2x\"\n")).toBe(
      "/p/agent.yaml: watchdogTimeout (line 1, column 18): expected a positive duration such as 90, \"90s\" or \"2m\", got \"2x\""
    )
    expect(bad("- a\n- b\n")).toBe("/p/agent.yaml: expected a mapping of keys at the top level")
    // a million spaces before a wrong unit held the duration's regular expression for minutes
    expect(bad(`watchdogTimeout: "1${" ".repeat(1_000_000)}x"\n`)).toMatch(
      /^\/p\/agent\.yaml: watchdogTimeout \(line 1, column 18\): expected a positive duration/
    )
    expect(Either.getOrThrow(parseConfig(`watchdogTimeout: "\t1${" ".repeat(1_000_000)}m "`, "f")).watchdogTimeout)
      .toBe(60)
    for (const text of ["watchdogTimeout: -1\n", "model:\n  nmae: x\n", "maxSteps: 0\n"]) {
      expect(bad(text)).not.toContain("\n")
    }
  })

  describe("finding the file", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mm-config-"))
    it("prefers --config, then AGENT_CONFIG, then ./agent.yaml", () => {
      expect(findConfigFile({ flag: "a.yaml", env: "b.yaml", cwd: dir })).toEqual({
        file: path.join(dir, "a.yaml"),
        required: true
      })
      expect(findConfigFile({ flag: undefined, env: "/x/b.yaml", cwd: dir })).toEqual({
        file: "/x/b.yaml",
        required: true
      })
      expect(findConfigFile({ flag: undefined, env: undefined, cwd: dir })).toBeUndefined()
      fs.writeFileSync(path.join(dir, "agent.yaml"), "maxSteps: 7\n")
      expect(findConfigFile({ flag: undefined, env: undefined, cwd: dir })?.file).toBe(path.join(dir, "agent.yaml"))
    })

    it.effect("loads it, or says in one line that it cannot", () =>
      Effect.gen(function*() {
        const loaded = yield* loadConfig({ flag: undefined, env: undefined, cwd: dir })
        expect(loaded.config.maxSteps).toBe(7)
        const missing = yield* Effect.flip(loadConfig({ flag: "nope.yaml", env: undefined, cwd: dir }))
        expect(missing.message).toBe(`${path.join(dir, "nope.yaml")}: cannot read the configuration: no such file`)
      }))

    it.effect("refuses a named pipe, a device and a file over 1 MiB in one line, without reading them", () =>
      Effect.gen(function*() {
        const fifo = path.join(dir, "pipe.yaml")
        execFileSync("mkfifo", [fifo])
        const refused = (flag: string) =>
          Effect.map(Effect.flip(loadConfig({ flag, env: undefined, cwd: dir })), (e) => e.message)
        // a FIFO with no writer blocked the read forever, /dev/zero filled the memory
        expect(yield* refused(fifo)).toBe(`${fifo}: cannot read the configuration: is a named pipe (FIFO), not a file`)
        expect(yield* refused("/dev/zero")).toBe("/dev/zero: cannot read the configuration: is not a regular file")
        const big = path.join(dir, "big.yaml")
        fs.writeFileSync(big, `# ${"x".repeat(MAX_CONFIG_BYTES)}\n`)
        expect(yield* refused(big)).toMatch(
          /^.*big\.yaml: cannot read the configuration: is \d+ bytes, over the limit of 1048576 for a configuration$/
        )
        expect(yield* refused(dir)).toBe(`${dir}: cannot read the configuration: is a directory`)
      }))
  })
})

describe("the published JSON Schema", () => {
  const schema = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "agent.schema.json"), "utf8"))
  it("describes every key, refuses unknown ones and knows the allowed values", () => {
    const walk = (node: any, value: any, prefix: string) => {
      expect(node.additionalProperties, prefix).toBe(false)
      for (const key of Object.keys(value)) {
        const child = node.properties[key]
        expect(child, `${prefix}${key}`).toBeDefined()
        expect(typeof child.description, `${prefix}${key}`).toBe("string")
        if (value[key] !== null && typeof value[key] === "object" && !Array.isArray(value[key])) {
          walk(child, value[key], `${prefix}${key}.`)
        }
      }
    }
    const { agents, mcpServers, sandbox, ...closed } = defaultConfig()
    walk({ ...schema, properties: { ...schema.properties, mcpServers: undefined, sandbox: undefined } }, closed, "")
    // agents: a map of names, each a closed object with its own keys described
    expect(agents).toEqual({})
    const agent = schema.properties.agents.additionalProperties
    expect(agent.additionalProperties).toBe(false)
    expect(Object.keys(agent.properties)).toEqual(["description", "system", "tools", "model"])
    expect(agent.properties.tools.items.enum).toContain("bash")
    expect(agent.properties.tools.items.enum).not.toContain("task")
    expect(schema.properties.agents.propertyNames.pattern).toBe("^[A-Za-z][A-Za-z0-9_-]{0,39}$")
    expect(sandbox).toEqual({
      mode: "auto",
      network: false,
      writable: [],
      env: [],
      limits: { processes: 2048, fileSize: 8192 }
    })
    expect(typeof schema.properties.sandbox.description).toBe("string")
    const [word, map] = schema.properties.sandbox.anyOf
    expect(word.enum).toEqual(["auto", "on", "off"])
    expect(map.additionalProperties).toBe(false)
    expect(Object.keys(map.properties)).toEqual(["mode", "network", "writable", "env", "limits"])
    expect(map.properties.limits.additionalProperties).toBe(false)
    expect(mcpServers).toEqual({})
    expect(typeof schema.properties.mcpServers.description).toBe("string")
    expect(schema.properties.mcpServers.additionalProperties.anyOf.map((entry: any) => entry.required)).toEqual([[
      "command"
    ], ["url"]])
    expect(schema.properties.permissions.enum).toEqual(["ask", "auto", "allow"])
    expect(schema.properties.compaction.properties.threshold).toMatchObject({
      exclusiveMinimum: 0,
      maximum: 1,
      default: 0.8
    })
    expect(JSON.stringify(schema.properties.maxSteps)).toContain("\"exclusiveMinimum\":0")
    expect(fs.readFileSync(path.join(REPO_ROOT, "agent.example.yaml"), "utf8")).toContain("$schema=./agent.schema.json")
  })
})

describe("agents: in agent.yaml", () => {
  it("takes declared sub-agents, and names a bad name or tool in one line", () => {
    const read = (text: string) => parseConfig(text, "agent.yaml")
    const good = read("agents:\n  reviewer:\n    description: Reviews code\n    tools: [read_file, grep]\n")
    expect(Either.getOrThrow(good).agents).toEqual({
      reviewer: { description: "Reviews code", tools: ["read_file", "grep"] }
    })
    expect(Either.getOrThrow(good).tasks).toEqual({ parallel: 3 })
    const badName = read("agents:\n  \"9 lives\":\n    description: x\n")
    expect(Either.isLeft(badName) && badName.left.message).toBe(
      "agent.yaml: agents (line 2, column 3): expected agent names of letters, digits, - and _ (a letter first, at most 40), got \"9 lives\""
    )
    const badTool = read("agents:\n  r:\n    description: x\n    tools: [task]\n")
    expect(Either.isLeft(badTool) && badTool.left.message).toBe(
      "agent.yaml: agents.r.tools[0] (line 4, column 13): expected one of bash, read_file, write_file, edit_file, grep, glob, todo, got \"task\""
    )
    const noDescription = read("agents:\n  r:\n    system: hi\n")
    expect(Either.isLeft(noDescription) && noDescription.left.message).toMatch(
      /^agent\.yaml: agents\.r\.description .*missing value$/
    )
    const parallel = read("tasks:\n  parallel: 0\n")
    expect(Either.isLeft(parallel) && parallel.left.message).toMatch(
      /^agent\.yaml: tasks\.parallel .*expected a positive whole number, got 0$/
    )
  })
})
