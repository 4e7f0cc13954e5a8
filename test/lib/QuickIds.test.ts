import { describe, expect, it } from "@effect/vitest"

import { nameHash, quickRandomBytes, quickRandomHex } from "../../src/lib/QuickIds"

describe("QuickIds", () => {
  it("nameHash is 128-bit FNV-1a: the published values, 32 hex digits", () => {
    expect(nameHash("")).toBe("6c62272e07bb014262b821756295c58d")
    expect(nameHash("a")).toBe("d228cb696f1a8caf78912b704e4a8964")
    expect(nameHash("http://127.0.0.1:8080/v1\nqwen")).toMatch(/^[0-9a-f]{32}$/)
    expect(nameHash("http://h/v1\nm1")).not.toBe(nameHash("http://h/v1\nm2"))
    // the bytes of the UTF-8 text, not its UTF-16 units
    expect(nameHash("é")).not.toBe(nameHash("\u00e9\u0000"))
  })

  it("nameHash in 16-bit limbs gives what the BigInt definition gives, for texts of every length up to 300", () => {
    const reference = (text: string): string => {
      let hash = 0x6c62272e07bb014262b821756295c58dn
      for (const byte of new TextEncoder().encode(text)) {
        hash = ((hash ^ BigInt(byte)) * 0x0000000001000000000000000000013bn) & ((1n << 128n) - 1n)
      }
      return hash.toString(16).padStart(32, "0")
    }
    const alphabet = "abcXYZ019 /:.\n\u00e9\u4e2d\u{1f600}"
    let text = ""
    for (let length = 0; length <= 300; length++) {
      expect(nameHash(text)).toBe(reference(text))
      text += [...alphabet][(length * 7) % [...alphabet].length]
    }
    expect(nameHash("\u00ff".repeat(64))).toBe(reference("\u00ff".repeat(64)))
  })

  it("random bytes and hex have the length asked and do not repeat", () => {
    expect(quickRandomBytes(4)).toHaveLength(4)
    expect(quickRandomHex(4)).toMatch(/^[0-9a-f]{8}$/)
    const seen = new Set(Array.from({ length: 10_000 }, () => quickRandomHex(8)))
    expect(seen.size).toBe(10_000)
    const bytes = quickRandomBytes(4096)
    expect(Math.max(...bytes)).toBeLessThanOrEqual(255)
    expect(new Set(bytes).size).toBeGreaterThan(200)
  })
})
