// The search worker: a `worker_threads` thread that runs grep's and glob's searches whole
// (the walk, the reading, the matching), one request at a time, and posts each result back.
// A regular expression or a glob comes from the model, and one can backtrack for days on a
// line: here it holds this thread only, which the main thread terminates when the heartbeat
// stops (SearchRunner.ts), while mm goes on answering. Built apart as
// dist/mm-search-worker.cjs (scripts/search-worker.mjs), with its libraries inside.
import { parentPort, workerData } from "node:worker_threads"

import { firstLineOf } from "../lib/OneLine"
import { runGlob } from "./GlobSearch"
import { runGrep } from "./GrepSearch"
import { pulseOf, type SearchMessage, type SearchReply } from "./SearchProtocol"
import { failure, type ToolResult } from "./Tool"

const port = parentPort
if (port !== null) {
  const pulse = pulseOf((workerData as { heartbeat: SharedArrayBuffer }).heartbeat)
  port.on("message", ({ id, request, totalMs }: SearchMessage) => {
    pulse.beat()
    const run: Promise<ToolResult> = request.kind === "lines"
      ? runGrep(request, pulse, totalMs)
      : runGlob(request, pulse, totalMs)
    run.then(
      (result) => port.postMessage({ id, result } satisfies SearchReply),
      (cause) =>
        port.postMessage({ id, result: failure(`${request.tool} failed: ${firstLineOf(cause)}`) } satisfies SearchReply)
    )
  })
}
