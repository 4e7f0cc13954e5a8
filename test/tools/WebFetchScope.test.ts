// What an "always" on a web_fetch covers: its host, any path and port, never another host; a
// `Tool` row naming web_fetch grants nothing; a Domain row is kept and read back as any other.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { alwaysChoices, type CallToApprove, grantsNothing, isAllowed } from "../../src/approvals/ApprovalScope"
import { importRefusal } from "../../src/approvals/ProjectApprovals"
import { makeRememberedApprovals } from "../../src/approvals/RememberedApprovals"
import { tempDir } from "../support/processes"

const never = (): never => {
  throw new Error("a fetch reads no command")
}

const fetchCall = (url: unknown, cwd = "/p"): CallToApprove => ({
  tool: "web_fetch",
  access: "network",
  input: { url },
  cwd
})

describe("an always answer on web_fetch", () => {
  it("covers the host, any path and port, and no other host", () => {
    const [choice, ...more] = alwaysChoices(fetchCall("https://docs.python.org/3/library/os.html"), never)
    expect(more).toEqual([])
    expect(choice).toEqual({
      scope: { _tag: "Domain", host: "docs.python.org" },
      keep: "project",
      label: "fetch anything from docs.python.org",
      covers: "any page of docs.python.org (a redirect to another host is not followed)"
    })
    const allowed = (url: string) => isAllowed([choice.scope], fetchCall(url), never)
    expect(allowed("https://docs.python.org/3/")).toBe(true)
    expect(allowed("http://DOCS.python.org:8080/x?y=1")).toBe(true)
    expect(allowed("https://python.org/")).toBe(false)
    expect(allowed("https://evil.docs.python.org.example/")).toBe(false)
    expect(allowed("file:///etc/passwd")).toBe(false)
    // an IPv6 host is named as the URL writes it
    expect(alwaysChoices(fetchCall("http://[::1]:8000/"), never)[0].scope).toEqual({ _tag: "Domain", host: "[::1]" })
    // no URL, no answer to keep
    expect(alwaysChoices(fetchCall(undefined), never)).toEqual([])
    expect(alwaysChoices(fetchCall("ftp://x/"), never)).toEqual([])
  })

  it("is not given by a row naming the whole tool, nor does a Domain row cover another tool", () => {
    const tool = { _tag: "Tool", name: "web_fetch" } as const
    expect(isAllowed([tool], fetchCall("https://a.example/"), never)).toBe(false)
    expect(grantsNothing(tool)).toBe("covers nothing: web_fetch is built in, its calls are asked one by one")
    const mcp: CallToApprove = {
      tool: "mcp__web__get",
      access: "outside",
      input: { url: "https://a.example/" },
      cwd: "/p"
    }
    expect(isAllowed([{ _tag: "Domain", host: "a.example" }], mcp, never)).toBe(false)
    expect(importRefusal({ _tag: "Domain", host: "a.example" }, "/p", never)).toBeUndefined()
  })

  it.effect("is remembered for the project and read back", () =>
    Effect.gen(function*() {
      const project = tempDir("mm-web-scope-")
      const store = yield* makeRememberedApprovals
      expect(yield* store.add(project, { _tag: "Domain", host: "docs.python.org" })).toBeUndefined()
      const read = yield* store.read(project)
      expect([read.problem, read.scopes]).toEqual([undefined, [{ _tag: "Domain", host: "docs.python.org" }]])
    }))
})
