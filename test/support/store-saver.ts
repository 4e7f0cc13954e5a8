// Child of the crash test: saves a changing session as fast as it can and prints the number
// of each save once it has returned, until it is killed. It is started from a V8 start-up
// snapshot (store-bundle.ts's snapshotHelper): the test starts it 200 times, and most of a
// start is loading the bundle, which the snapshot has already done.
import * as NodeFs from "node:fs"
import * as v8 from "node:v8"

import * as Effect from "effect/Effect"

import * as FileSessionStore from "../../src/sessions/FileSessionStore"
import { crashSession } from "./store-fixtures"

const store = FileSessionStore.make({ indexFile: false })

const run = (dir: string, id: string) =>
  Effect.runPromise(Effect.gen(function*() {
    const loaded = yield* store.load(dir, id)
    let seq = (loaded as unknown as { seq: number }).seq
    for (;;) {
      seq++
      yield* store.save(dir, crashSession(id, seq))
      NodeFs.writeSync(1, `${seq}\n`)
    }
  })).catch((error) => {
    process.stderr.write(`${String(error)}\n`)
    process.exit(1)
  })

// started from the snapshot, the arguments follow node's own path; run as a script, its path
if (v8.startupSnapshot.isBuildingSnapshot()) {
  v8.startupSnapshot.setDeserializeMainFunction(() => run(process.argv[1], process.argv[2]))
} else {
  void run(process.argv[2], process.argv[3])
}
