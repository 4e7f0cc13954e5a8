/**
 * `mm acp` in a project whose agent.yaml holds settings not trusted yet (config/ProjectTrust.ts):
 * they were left out at start, and the editor is asked, once per connection, at the first
 * prompt of a thread (a permission request needs a session): what they would do, and whether
 * to trust them. A yes is recorded (config/TrustStore.ts); since the MCP servers and the model
 * were set up at start, the thread is told that they apply from the next start of `mm acp`.
 */
import * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"

import { AppConfig } from "../config/Config"
import { questionLines } from "../config/ProjectTrust"
import { recordTrust } from "../config/TrustStore"
import type { Peer } from "./AcpApprover"
import { AcpConnection, type ConnectionShape, send } from "./Connection"
import { agentText } from "./ToolUpdates"

const TRUST = "trust-project-config"
const NOT_NOW = "not-now"

/** The connections that asked already: the question comes once per start of `mm acp`. */
const asked = new WeakSet<ConnectionShape>()

const requestOf = (peer: Peer, lines: ReadonlyArray<string>): acp.RequestPermissionRequest => ({
  sessionId: peer.sessionId,
  toolCall: {
    toolCallId: `mm-project-trust-${peer.sessionId}`,
    title: "Trust this project's configuration?",
    kind: "other",
    status: "pending",
    content: [{ type: "content", content: { type: "text", text: lines.join("\n") } }]
  },
  options: [
    { optionId: TRUST, name: "Trust this project's configuration", kind: "allow_always" },
    { optionId: NOT_NOW, name: "Not now", kind: "reject_once" }
  ]
})

/** Asks the editor about the project's settings that wait for trust, the first time a prompt comes. */
export const askProjectTrust = Effect.fn("Acp.askProjectTrust")(function*(peer: Peer) {
  const { untrusted } = yield* AppConfig
  const connection = yield* AcpConnection
  if (untrusted === undefined || asked.has(connection)) return
  asked.add(connection)
  const request = requestOf(peer, questionLines(untrusted.shown, untrusted.settings))
  const outcome = yield* Effect.tryPromise((signal) =>
    peer.client.request(acp.methods.client.session.requestPermission, request, {
      cancellationSignal: signal,
      stopWaitingOnCancel: true
    })
  ).pipe(
    Effect.map((response) => response.outcome),
    Effect.catchAll((cause) =>
      Effect.sync((): acp.RequestPermissionOutcome => {
        peer.log(`the question about ${untrusted.shown} failed (${String(cause)}): not trusted`)
        return { outcome: "cancelled" }
      })
    )
  )
  if (outcome.outcome !== "selected" || outcome.optionId !== TRUST) {
    const text = `(${untrusted.shown}: its settings that need your trust stay off for this run of mm acp; ` +
      "you will be asked again at its next start)\n\n"
    return yield* send(peer.client, peer.sessionId, [agentText(text)])
  }
  const recorded = yield* Effect.try(() => recordTrust(untrusted.project, untrusted.file, untrusted.hash)).pipe(
    Effect.map((file) => `remembered in ${file}`),
    Effect.catchAll((error) => Effect.succeed(`but it could not be remembered: ${String(error.error)}`))
  )
  const text = `(${untrusted.shown} trusted, ${recorded}. Its settings apply from the next start of mm acp: ` +
    "restart the agent in your editor to use them.)\n\n"
  yield* send(peer.client, peer.sessionId, [agentText(text)])
})
