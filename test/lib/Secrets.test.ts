import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"

import {
  makeStreamRedactor,
  redact,
  registerSecret,
  registerSecretVariable,
  resetSecretsForTests,
  resolveSecretRefs,
  toolEnv
} from "../../src/lib/Secrets"
import { sanitize } from "../../src/text/Sanitize"
import { type FakeModelServer, startFakeModelServer } from "../support/FakeModelServer"
import { runMm, tempProject } from "../support/MmProcess"

describe("Secrets", () => {
  afterEach(() => resetSecretsForTests())

  it("replaces every registered secret, as is and as written inside JSON", () => {
    registerSecret("sk-live-123456")
    registerSecret("pa\"ss\\word")
    expect(redact("Bearer sk-live-123456 refused; sk-live-123456 again")).toBe(
      "Bearer [redacted] refused; [redacted] again"
    )
    expect(redact(JSON.stringify({ key: "pa\"ss\\word" }))).toBe("{\"key\":\"[redacted]\"}")
    expect(redact("raw pa\"ss\\word")).toBe("raw [redacted]")
  })

  it("ignores values under four characters, which would match by chance", () => {
    registerSecret("abc")
    registerSecret("   ")
    expect(redact("abc abcd")).toBe("abc abcd")
  })

  it("leaves the variables holding secrets out of the tools' environment", () => {
    process.env.MM_TEST_SECRET_KEY = "key-value-1"
    process.env.MM_TEST_COPY = "key-value-1"
    try {
      registerSecretVariable("MM_TEST_SECRET_KEY")
      const env = toolEnv()
      expect(env.MM_TEST_SECRET_KEY).toBeUndefined()
      expect(env.MM_TEST_COPY).toBeUndefined()
      expect(env.PATH).toBe(process.env.PATH)
      expect(redact("echo key-value-1")).toBe("echo [redacted]")
    } finally {
      delete process.env.MM_TEST_SECRET_KEY
      delete process.env.MM_TEST_COPY
    }
  })

  it("reads ${NAME} from the environment and registers what it read", () => {
    const env = { TOKEN: "tok-98765", OTHER: "x" }
    expect(resolveSecretRefs("Bearer ${TOKEN} and ${MISSING}", env)).toEqual({
      value: "Bearer tok-98765 and ",
      missing: ["MISSING"]
    })
    expect(redact("sent tok-98765")).toBe("sent [redacted]")
    expect(resolveSecretRefs("no reference", env)).toEqual({ value: "no reference", missing: [] })
  })
})

describe("makeStreamRedactor", () => {
  afterEach(() => resetSecretsForTests())

  it("catches a secret split across pieces, and gives back what was held when it was none", () => {
    registerSecret("sk-split-secret")
    const redactor = makeStreamRedactor()
    const shown = ["the key is sk-sp", "lit-sec", "ret, and sk-", "other"].map(redactor.push).join("") +
      redactor.flush()
    expect(shown).toBe("the key is [redacted], and sk-other")
    const again = makeStreamRedactor()
    expect(again.push("ends with sk-s")).toBe("ends with ")
    expect(again.flush()).toBe("sk-s")
  })
})

describe("sanitize", () => {
  it("removes escape sequences and control characters, keeping newline and tab", () => {
    expect(sanitize("\u001b]0;PWNED\u0007title")).toBe("title")
    expect(sanitize("\u001b]8;;http://x\u001b\\link\u001b]8;;\u001b\\")).toBe("link")
    expect(sanitize("a\u001b[2J\u001b[1;1Hb\u001b[31mred\u001b[0m")).toBe("abred")
    expect(sanitize("bell\u0007 back\bspace\r\n\tok\u009b31m\u0085")).toBe("bell backspace\n\tok")
    expect(sanitize("\u001bc reset \u001b(B")).toBe(" reset ")
    expect(sanitize("plain text, ünïcödé ✓")).toBe("plain text, ünïcödé ✓")
  })

  it("does not swallow the lines after an unterminated sequence", () => {
    expect(sanitize("\u001b]0;never ends\nnext line")).toBe("\nnext line")
    expect(sanitize("half \u001b[12")).toBe("half 12")
  })
})

describe("the API key end to end", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("a 401 echoing the key and a bash running env leave it in no output, session file or request", async () => {
    const key = "sk-test-4f9a8b7c6d5e"
    const project = tempProject([
      "model:",
      `  url: ${server.url}`,
      "  name: fake-model",
      "  apiKeyEnv: MM_TEST_API_KEY",
      "watchdogTimeout: 5",
      "permissions: allow",
      "sessions:",
      "  enabled: true"
    ])
    server.push(
      { kind: "status", status: 401, body: { error: { message: `invalid key ${key} for this server` } } },
      {
        toolCalls: [{
          name: "bash",
          arguments: { command: "env; echo \"key=$MM_TEST_API_KEY\"; echo leaked-by-file $(cat key.txt)" }
        }]
      },
      { text: `the key is ${key}` }
    )
    fs.writeFileSync(path.join(project, "key.txt"), key)
    const run = await runMm(project, ["first question", "show the environment"], [], { MM_TEST_API_KEY: key })
    expect(run.stderr).toContain("model server answered HTTP 401: invalid key [redacted] for this server")
    expect(run.stdout).toContain("the key is [redacted]")
    expect(run.stdout + run.stderr).not.toContain(key)
    const requests = server.completions().slice(-2)
    expect(requests[0].headers.authorization).toBe(`Bearer ${key}`)
    const toolResult = requests[1].body.messages.find((m: { role: string }) => m.role === "tool")
    expect(toolResult.content).toContain("key=\n")
    expect(toolResult.content).not.toContain("MM_TEST_API_KEY")
    expect(toolResult.content).toContain("leaked-by-file [redacted]")
    expect(JSON.stringify(requests.map((r) => r.body))).not.toContain(key)
    const dir = path.join(project, ".mm/sessions")
    const files = fs.readdirSync(dir).filter((f) => f.endsWith(".json") && !f.startsWith("."))
    expect(files).toHaveLength(1)
    const saved = fs.readFileSync(path.join(dir, files[0]), "utf8")
    expect(saved).not.toContain(key)
    expect(saved).toContain("invalid key [redacted] for this server")
  })
})
