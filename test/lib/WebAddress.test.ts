import { describe, expect, it } from "@effect/vitest"

import { refusedLine, refusedRange } from "../../src/lib/WebAddress"

describe("the addresses web_fetch may reach", () => {
  it("judges an IPv4 address written in an IPv6 form by the IPv4 address it carries", () => {
    expect(refusedRange("::ffff:127.0.0.1", false)).toBe("loopback")
    expect(refusedRange("64:ff9b::10.0.0.1", false)).toBe("private")
    // NAT64: how an IPv6-only network reaches a public IPv4 site
    expect(refusedRange("64:ff9b::8.8.8.8", false)).toBeUndefined()
    // the old IPv4-compatible form is refused, whatever it carries
    expect(refusedRange("[::7f00:1]", false)).toBe("IPv4-compatible")
    expect(refusedRange("::808:808", false)).toBe("IPv4-compatible")
    expect(refusedRange("2001:4860:4860::8888", false)).toBeUndefined()
  })

  it("says why in one line", () => {
    expect(refusedLine("::7f00:1", "IPv4-compatible")).toBe(
      "::7f00:1 is an IPv4-compatible address, not reached unless webFetch.allowPrivate allows it"
    )
    expect(refusedLine("10.0.0.1", "private")).toBe(
      "10.0.0.1 is a private address, not reached unless webFetch.allowPrivate allows it"
    )
  })
})
