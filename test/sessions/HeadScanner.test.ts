import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"

import type { Session } from "../../src/domain/Session"
import { scanHead, scanHeadByField, scanLayout } from "../../src/sessions/HeadScanner"
import { bytesEndLikeObject, encodeSession, endsLikeObject } from "../../src/sessions/SessionCodec"

// The listing reads each file's head with one regular expression when the file is laid out as
// mm writes it, and field by field otherwise: both must always tell the same, and every file mm
// writes must be read in the one match (test/sessions/SessionHead.test.ts holds both to the
// head's description).

const text = fc.string({
  unit: fc.constantFrom("a", "é", "\"", "\\", "\n", "\t", " ", "/", "{", "]", "😀"),
  maxLength: 12
})
const plainText = fc.string({ unit: fc.constantFrom("a", "b", "é", " ", "/", "-", ":", "😀"), maxLength: 24 })

const session = (strings: fc.Arbitrary<string>): fc.Arbitrary<Session> =>
  fc.record({
    cwd: strings,
    createdAt: strings,
    updatedAt: strings,
    title: strings,
    turns: fc.nat(1000),
    errorCount: fc.nat(2),
    forkedFrom: fc.option(fc.record({ id: strings, turn: fc.nat(50) }), { nil: undefined }),
    archiveOf: fc.option(strings, { nil: undefined }),
    extra: fc.option(strings, { nil: undefined })
  }).map(({ archiveOf, errorCount, extra, forkedFrom, ...fields }) => ({
    version: 1,
    id: "20261203-101530-4f2a9c1e",
    ...fields,
    messages: [{ role: "user" as const, content: "hello" }],
    errors: Array.from({ length: errorCount }, (_, turns) => ({
      kind: "generation" as const,
      at: fields.createdAt,
      turns,
      question: fields.title,
      line: "the model server stopped answering"
    })),
    ...(forkedFrom === undefined ? {} : { forkedFrom }),
    ...(archiveOf === undefined ? {} : { archiveOf }),
    ...(extra === undefined ? {} : { note: extra })
  }))

/** The one-match path answers only what the field-by-field scan answers. */
const agrees = (head: string, complete: boolean): void => {
  const fast = scanLayout(head)
  if (fast !== undefined) expect(fast).toStrictEqual(scanHeadByField(head, complete))
}

/** The head of a small session with three turns, as mm writes it. */
const smallHead = () =>
  encodeSession({
    version: 1,
    id: "20261203-101530-4f2a9c1e",
    cwd: "/p",
    createdAt: "c",
    updatedAt: "u",
    title: "t",
    turns: 3,
    messages: [],
    errors: []
  })

describe("the head of a session file", () => {
  it("is read in one match for every file mm writes, whatever its strings and its errors", () => {
    fc.assert(
      fc.property(session(text), (written) => {
        const head = encodeSession(written)
        const fast = scanLayout(head)
        expect(fast).toBeDefined()
        expect(fast).toStrictEqual(scanHeadByField(head, true))
      }),
      { numRuns: 300 }
    )
  })

  it("tells what the field-by-field scan tells, for any session mm writes, whole or cut short", () => {
    fc.assert(
      fc.property(session(text), fc.nat(), (written, cut) => {
        const whole = encodeSession(written)
        agrees(whole, true)
        expect(scanHead(whole, true)).toStrictEqual(scanHeadByField(whole, true))
        const head = whole.slice(0, cut % (whole.length + 1))
        agrees(head, false)
        expect(scanHead(head, false)).toStrictEqual(scanHeadByField(head, false))
      }),
      { numRuns: 500 }
    )
  })

  it("tells what the field-by-field scan tells when the file was edited by hand", () => {
    const edit = fc.record({
      at: fc.nat(),
      length: fc.nat(3),
      insert: fc.string({
        unit: fc.constantFrom("\"", "\\", "\n", " ", "{", "}", "[", "]", ",", ":", "0", "1", "-", "e", "a"),
        maxLength: 3
      })
    })
    fc.assert(
      fc.property(session(plainText), fc.array(edit, { minLength: 1, maxLength: 3 }), (written, edits) => {
        let head = encodeSession(written)
        for (const { at, insert, length } of edits) {
          const from = at % (head.length + 1)
          head = head.slice(0, from) + insert + head.slice(from + length)
        }
        agrees(head, true)
        agrees(head, false)
      }),
      { numRuns: 2000 }
    )
  })

  it("leaves a number JSON would not write, an escape JSON has not or another order to the field-by-field scan", () => {
    const head = smallHead()
    expect(scanLayout(head)).toBeDefined()
    expect(scanLayout(head.replace("\"turns\": 3", "\"turns\": 03"))).toBeUndefined()
    expect(scanHead(head.replace("\"turns\": 3", "\"turns\": 03"), true)._tag).toBe("Unsure")
    // an escape JSON has is read in the match; one it has not is the slow path's to refuse
    expect(scanLayout(head.replace("\"title\": \"t\"", "\"title\": \"t\\u0041\""))).toMatchObject({
      _tag: "Found",
      fields: { title: "tA" }
    })
    expect(scanLayout(head.replace("\"title\": \"t\"", "\"title\": \"t\\x41\""))).toBeUndefined()
    expect(scanHead(head.replace("\"title\": \"t\"", "\"title\": \"t\\x41\""), true)._tag).toBe("Unsure")
    const reordered = head.replace("  \"cwd\": \"/p\",\n", "").replace(
      "\"turns\": 3,",
      "\"turns\": 3,\n  \"cwd\": \"/p\","
    )
    expect(scanLayout(reordered)).toBeUndefined()
    expect(scanHead(reordered, true)).toStrictEqual(scanLayout(head))
  })

  it("is unsure of a head without this mm's numbering: its turns may count the old way", () => {
    const head = smallHead()
    expect(head).toContain("\n  \"numbering\": 2,\n")
    expect(scanHead(head, true)._tag).toBe("Found")
    // written by an earlier mm (none), or by one numbering otherwise
    for (const other of ["", "\n  \"numbering\": 1,", "\n  \"numbering\": 3,", "\n  \"numbering\": \"2\","]) {
      const unmarked = head.replace("\n  \"numbering\": 2,", other)
      expect(scanLayout(unmarked)).toBeUndefined()
      expect(scanHeadByField(unmarked, true)._tag).toBe("Unsure")
      expect(scanHeadByField(unmarked.replace(/\n */g, ""), true)._tag).toBe("Unsure")
    }
    // elsewhere in the head, or in one line, it is read all the same
    const moved = head.replace("\n  \"numbering\": 2,", "").replace("\"turns\": 3,", "\"turns\": 3, \"numbering\": 2,")
    expect(scanHead(moved, true)).toStrictEqual(scanLayout(head))
    expect(scanHead(head.replace(/\n */g, ""), true)).toStrictEqual(scanLayout(head))
  })

  it("ends like an object read from its bytes exactly when it does read from its text", () => {
    // whitespace of both kinds, the bytes of characters beyond ASCII (a no-break space, a line
    // separator, a cut one) and what a file ends with
    const piece = fc.constantFrom(
      " ",
      "\n",
      "\r",
      "\t",
      "\v",
      "\f",
      "}",
      "]",
      "\"",
      "a",
      "\u00a0",
      "\u2028",
      "\ufeff",
      "é"
    )
    const bytes = fc.tuple(fc.array(piece, { maxLength: 12 }), fc.nat(3)).map(([pieces, cut]) =>
      Buffer.from(pieces.join("")).subarray(cut)
    )
    fc.assert(
      fc.property(bytes, (tail) => {
        expect(bytesEndLikeObject(tail, tail.length)).toBe(endsLikeObject(tail.toString("utf8")))
      }),
      { numRuns: 3000 }
    )
    expect(bytesEndLikeObject(Buffer.from("  ]\n}\n"), 6)).toBe(true)
    expect(bytesEndLikeObject(Buffer.from("  ]\n}\u00a0\n"), 8)).toBe(true)
    expect(bytesEndLikeObject(Buffer.from("  ]\n  }\n"), 8)).toBe(false)
  })
})
