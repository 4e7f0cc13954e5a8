// Child of the concurrency test: says "ready", waits for "go" on stdin, then creates sessions
// as fast as it can and prints the ids it was given (and, narrowed, how many it tried), as JSON.
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"

import * as Effect from "effect/Effect"

import { makeSessionId } from "../../src/domain/SessionId"
import * as FileSessionStore from "../../src/sessions/FileSessionStore"

const [dir, countText, mode] = process.argv.slice(2)
const count = Number(countText)

let attempts = 0

/** Ten random bits instead of thirty-two: two processes collide all the time. */
const narrowId = () => {
  attempts++
  const [a, b] = NodeCrypto.randomBytes(2)
  return makeSessionId(new Date(), new Uint8Array([0, 0, a & 0x03, b]))
}

const store = FileSessionStore.make({ indexFile: false, ...(mode === "narrow" ? { newId: narrowId } : {}) })

process.stdin.once("data", () => {
  const ids = Effect.runSync(Effect.forEach(Array.from({ length: count }), () => store.createNew(dir, "/race")))
  NodeFs.writeSync(1, JSON.stringify({ ids: ids.map((session) => session.id), attempts }) + "\n")
  process.exit(0)
})
NodeFs.writeSync(1, "ready\n")
