// Child of the crash test: saves a changing session as fast as it can and prints the number
// of each save once it has returned, until it is killed.
import * as NodeFs from "node:fs"

import * as Effect from "effect/Effect"

import * as FileSessionStore from "../../src/sessions/FileSessionStore"
import { crashSession } from "./store-fixtures"

const [dir, id] = process.argv.slice(2)
const store = FileSessionStore.make({ indexFile: false })

const program = Effect.gen(function*() {
  const loaded = yield* store.load(dir, id)
  let seq = (loaded as unknown as { seq: number }).seq
  for (;;) {
    seq++
    yield* store.save(dir, crashSession(id, seq))
    NodeFs.writeSync(1, `${seq}\n`)
  }
})

Effect.runPromise(program).catch((error) => {
  process.stderr.write(`${String(error)}\n`)
  process.exit(1)
})
