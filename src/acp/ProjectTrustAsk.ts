/**
 * `mm acp` in a project whose agent.yaml holds settings not trusted yet (config/ProjectTrust.ts),
 * or whose own slash commands are not trusted yet (commands/UserCommands.ts): they were left
 * out at start, and the editor is asked, once per connection, at the first prompt of a thread
 * (a permission request needs a session): what they would do, and whether to trust them. A
 * yes is recorded (config/TrustStore.ts). Since the MCP servers and the model were set up at
 * start, the thread is told that the settings apply from the next start of `mm acp`; the
 * commands apply at once: the thread's list is read again and sent to the editor.
 */
import * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"

import { commandsQuestionLine, commandsWaiting, type ProjectCommands } from "../commands/UserCommands"
import { AppConfig } from "../config/Config"
import { questionLines, type UntrustedSettings } from "../config/ProjectTrust"
import { recordCommandsTrust, recordTrust } from "../config/TrustStore"
import type { Peer } from "./AcpApprover"
import { AcpConnection, type ConnectionShape, send } from "./Connection"
import { refreshOwnCommands } from "./OwnCommands"
import { agentText } from "./ToolUpdates"

const TRUST = "trust-project-config"
const NOT_NOW = "not-now"

/** The connections that asked already: the question comes once per start of `mm acp`. */
const asked = new WeakSet<ConnectionShape>()

/** What is asked: the project's guarded settings, its commands, or both. */
interface Asked {
  readonly untrusted: UntrustedSettings | undefined
  readonly commands: ProjectCommands | undefined
}

const what = (asked: Asked): string => asked.untrusted === undefined ? "commands" : "configuration"

const requestOf = (peer: Peer, asked: Asked): acp.RequestPermissionRequest => ({
  sessionId: peer.sessionId,
  toolCall: {
    toolCallId: `mm-project-trust-${peer.sessionId}`,
    title: `Trust this project's ${what(asked)}?`,
    kind: "other",
    status: "pending",
    content: [{
      type: "content",
      content: {
        type: "text",
        text: [
          ...(asked.untrusted === undefined
            ? ["This project has its own slash commands. They are offered only once you trust them:"]
            : questionLines(asked.untrusted.shown, asked.untrusted.settings)),
          ...(asked.commands === undefined ? [] : [commandsQuestionLine(asked.commands)])
        ].join("\n")
      }
    }]
  },
  options: [
    { optionId: TRUST, name: `Trust this project's ${what(asked)}`, kind: "allow_always" },
    { optionId: NOT_NOW, name: "Not now", kind: "reject_once" }
  ]
})

/** What the thread is told after a no. */
const notNowText = ({ commands, untrusted }: Asked): string =>
  [
    ...(untrusted === undefined
      ? []
      : [
        `(${untrusted.shown}: its settings that need your trust stay off for this run of mm acp; ` +
        "you will be asked again at its next start)"
      ]),
    ...(commands === undefined
      ? []
      : [
        `(${
          commands.shown.join(" and ")
        }: this project's own commands stay off; you will be asked again at the next start of mm acp)`
      ])
  ].join("\n") + "\n\n"

/** Records what was trusted; the words that say where, or that it could not be. */
const record = (asked: Asked, project: string) =>
  Effect.try(() => {
    let file = ""
    if (asked.commands !== undefined) file = recordCommandsTrust(project, asked.commands.folder, asked.commands.hash)
    if (asked.untrusted !== undefined) {
      file = recordTrust(asked.untrusted.project, asked.untrusted.file, asked.untrusted.hash)
    }
    return `remembered in ${file}`
  }).pipe(Effect.catchAll((error) => Effect.succeed(`but it could not be remembered: ${String(error.error)}`)))

/** Asks the editor about the project's settings and commands that wait for trust, the first time a prompt comes. */
export const askProjectTrust = Effect.fn("Acp.askProjectTrust")(function*(peer: Peer) {
  const loaded = yield* AppConfig
  const connection = yield* AcpConnection
  if (asked.has(connection)) return
  // looked at once per connection, asked or not: later prompts pay nothing
  asked.add(connection)
  const untrusted = loaded.untrusted
  const commands = commandsWaiting(loaded, peer.cwd)
  if (untrusted === undefined && commands === undefined) return
  const question: Asked = { untrusted, commands }
  const outcome = yield* Effect.tryPromise((signal) =>
    peer.client.request(acp.methods.client.session.requestPermission, requestOf(peer, question), {
      cancellationSignal: signal,
      stopWaitingOnCancel: true
    })
  ).pipe(
    Effect.map((response) => response.outcome),
    Effect.catchAll((cause) =>
      Effect.sync((): acp.RequestPermissionOutcome => {
        peer.log(`the question about this project's ${what(question)} failed (${String(cause)}): not trusted`)
        return { outcome: "cancelled" }
      })
    )
  )
  if (outcome.outcome !== "selected" || outcome.optionId !== TRUST) {
    return yield* send(peer.client, peer.sessionId, [agentText(notNowText(question))])
  }
  const recorded = yield* record(question, peer.cwd)
  const texts = [
    ...(untrusted === undefined ? [] : [
      `(${untrusted.shown} trusted, ${recorded}. Its settings apply from the next start of mm acp: ` +
      "restart the agent in your editor to use them.)"
    ]),
    ...(commands === undefined ? [] : [
      `(this project's commands trusted${untrusted === undefined ? `, ${recorded}` : ""}: ${
        commands.names.map((name) => `/${name}`).join(", ")
      } can be used now.)`
    ])
  ]
  if (commands !== undefined) yield* refreshOwnCommands(peer.client, peer.sessionId)
  yield* send(peer.client, peer.sessionId, [agentText(`${texts.join("\n")}\n\n`)])
})
