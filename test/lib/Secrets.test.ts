import { beforeEach, describe, expect, it } from "@effect/vitest"

import { SecretRegistry } from "../../src/lib/Secrets"

let secrets = new SecretRegistry()

describe("Secrets", () => {
  beforeEach(() => {
    secrets = new SecretRegistry()
  })

  it("replaces every registered secret, as is and as written inside JSON", () => {
    secrets.register("sk-live-123456")
    secrets.register("pa\"ss\\word")
    expect(secrets.redact("Bearer sk-live-123456 refused; sk-live-123456 again")).toBe(
      "Bearer [redacted] refused; [redacted] again"
    )
    expect(secrets.redact(JSON.stringify({ key: "pa\"ss\\word" }))).toBe("{\"key\":\"[redacted]\"}")
    expect(secrets.redact("raw pa\"ss\\word")).toBe("raw [redacted]")
  })

  it("ignores values under four characters, which would match by chance", () => {
    secrets.register("abc")
    secrets.register("   ")
    expect(secrets.redact("abc abcd")).toBe("abc abcd")
  })

  it("leaves the variables holding secrets out of the tools' environment", () => {
    process.env.MM_TEST_SECRET_KEY = "key-value-1"
    process.env.MM_TEST_COPY = "key-value-1"
    try {
      secrets.registerVariable("MM_TEST_SECRET_KEY")
      const env = secrets.toolEnv()
      expect(env.MM_TEST_SECRET_KEY).toBeUndefined()
      expect(env.MM_TEST_COPY).toBeUndefined()
      expect(env.PATH).toBe(process.env.PATH)
      expect(secrets.redact("echo key-value-1")).toBe("echo [redacted]")
    } finally {
      delete process.env.MM_TEST_SECRET_KEY
      delete process.env.MM_TEST_COPY
    }
  })

  it("reads ${NAME} from the environment and registers what it read", () => {
    const env = { TOKEN: "tok-98765", OTHER: "x" }
    expect(secrets.resolveRefs("Bearer ${TOKEN} and ${MISSING}", env)).toEqual({
      value: "Bearer tok-98765 and ",
      missing: ["MISSING"]
    })
    expect(secrets.redact("sent tok-98765")).toBe("sent [redacted]")
    expect(secrets.resolveRefs("no reference", env)).toEqual({ value: "no reference", missing: [] })
  })
})

describe("makeStreamRedactor", () => {
  beforeEach(() => {
    secrets = new SecretRegistry()
  })

  it("catches a secret split across pieces, and gives back what was held when it was none", () => {
    secrets.register("sk-split-secret")
    const redactor = secrets.streamRedactor()
    const shown = ["the key is sk-sp", "lit-sec", "ret, and sk-", "other"].map(redactor.push).join("") +
      redactor.flush()
    expect(shown).toBe("the key is [redacted], and sk-other")
    const again = secrets.streamRedactor()
    expect(again.push("ends with sk-s")).toBe("ends with ")
    expect(again.flush()).toBe("sk-s")
  })
})

describe("registerUrl", () => {
  it("registers a URL's user part and its password, as written and decoded; a URL without one changes nothing", () => {
    const secrets = new SecretRegistry()
    secrets.registerUrl("https://example.com/v1")
    expect(secrets.known()).toBe(false)
    secrets.registerUrl("http://user:p%40ss-word@host:8080/v1")
    expect(secrets.redact("at http://user:p%40ss-word@host:8080/v1")).toBe("at http://[redacted]@host:8080/v1")
    expect(secrets.redact("the password p@ss-word")).toBe("the password [redacted]")
    secrets.registerUrl("https://tok-12345@host/v1")
    expect(secrets.redact("https://tok-12345@host/v1")).toBe("https://[redacted]@host/v1")
  })
})
