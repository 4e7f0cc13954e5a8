// What every request mm sends the editor shares: a deadline (`editorTimeout`) with a one-line
// failure, requests whose answer is not awaited, and a command line run with exactly its environment.
import * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"

import { firstLineOf } from "../lib/OneLine"
import { programPath } from "../lib/Programs"
import type { CommandLine } from "../tools/Tool"
import type { Peer } from "./AcpApprover"

/**
 * One request to the editor, failed with one line when it is not answered within the
 * deadline (`editorTimeout`); the request is left to the editor, whose late answer is ignored.
 */
export const askEditor = <A>(request: () => Promise<A>, seconds: number, what: string): Effect.Effect<A, string> =>
  Effect.tryPromise({ try: request, catch: (cause) => `${what} (${firstLineOf(cause)})` }).pipe(
    Effect.timeoutFail({
      duration: deadlineMs(seconds),
      onTimeout: () => `${what.replace(/ could not /, " did not ")} within ${seconds} s (editorTimeout)`
    })
  )

/** A deadline in milliseconds that setTimeout can hold. */
export const deadlineMs = (seconds: number): number => Math.min(Math.max(1, Math.round(seconds * 1000)), 2 ** 31 - 1)

/** Sends a request whose answer mm does not need (a kill, a release): never waited for, so it cannot hold a cancel. */
export const sendAndForget = (work: () => Promise<unknown>) =>
  Effect.sync(() => {
    work().catch(() => undefined)
  })

/**
 * The argv the editor runs: a command that must have exactly its own environment (a confined
 * one) is started by `env -i` with it, since the editor's terminal adds its own variables.
 */
export const withWholeEnv = (line: CommandLine, cwd: string): ReadonlyArray<string> =>
  line.env === undefined
    ? line.argv
    : [
      programPath("env", [cwd]),
      "-i",
      ...Object.entries(line.env).map(([name, value]) => `${name}=${value}`),
      ...line.argv
    ]

/** Shows the editor's terminal under the call that runs in it (none when the call has no id). */
export const showTerminalUnder = (peer: Peer, callId: string | undefined, terminalId: string) =>
  callId === undefined ? Effect.void : sendAndForget(() =>
    peer.client.notify(acp.methods.client.session.update, {
      sessionId: peer.sessionId,
      update: { sessionUpdate: "tool_call_update", toolCallId: callId, content: [{ type: "terminal", terminalId }] }
    })
  )
