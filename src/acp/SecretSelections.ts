/**
 * A prompt's selection of lines in a file that looks secret (tools/SecretFiles.ts): mm reads
 * such lines only once the editor's user says yes, through a permission request of its own (a
 * selection is no tool call of the model's, so the request names one made for it), in every
 * mode but `allow`. The answer is for this selection only.
 */
import * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

import { secretsAsked } from "../approvals/SessionSettings"
import { AppConfig } from "../config/Config"
import { quickRandomHex } from "../lib/QuickIds"
import type { Conversation } from "../sessions/Conversation"
import { secretFilesOf } from "../tools/SecretFiles"
import type { Peer } from "./AcpApprover"

const READ = "read-selection"
const SKIP = "skip-selection"

/** Whether the editor's user lets mm read the selected lines `label` of a file that looks secret (`why`). */
const askEditor = (peer: Peer, label: string, why: string): Effect.Effect<boolean> =>
  Effect.tryPromise((signal) =>
    peer.client.request(acp.methods.client.session.requestPermission, {
      sessionId: peer.sessionId,
      toolCall: {
        toolCallId: `mm-selection-${quickRandomHex(6)}`,
        title: `Read ${label} (your selection)`,
        kind: "read",
        status: "pending",
        content: [{ type: "content", content: { type: "text", text: `${why}: its lines would go to the model` } }]
      },
      options: [
        { optionId: READ, name: "Read the selected lines", kind: "allow_once" },
        { optionId: SKIP, name: "Leave them out", kind: "reject_once" }
      ]
    }, { cancellationSignal: signal, stopWaitingOnCancel: true })
  ).pipe(
    Effect.map((response) => response.outcome.outcome === "selected" && response.outcome.optionId === READ),
    Effect.catchAll(() => Effect.succeed(false))
  )

/**
 * For `readSelections` (PromptBlocks.ts): why a selection's lines are left out — the file looks
 * secret and the editor's user said no (or could not be asked) — or undefined to read them.
 */
export const secretSelectionCheck = (peer: Peer, conversation: Conversation) =>
  Effect.gen(function*() {
    const { config } = yield* AppConfig
    const { mode } = yield* Ref.get(conversation.settings)
    const secrets = yield* secretFilesOf(conversation.cwd, config.secrets)
    return (file: string, label: string): Effect.Effect<string | undefined> => {
      const why = secretsAsked(config.permissions, mode) ? secrets.reason(file) : undefined
      if (why === undefined) return Effect.succeed(undefined)
      return Effect.map(askEditor(peer, label, why), (yes) => (yes ? undefined : `${why}: its lines were not read`))
    }
  })
