import * as path from "node:path"

import type * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Ref from "effect/Ref"

import { Agent } from "../agent/Agent"
import { Jobs } from "../agent/Jobs"
import type { Scope } from "../approvals/ApprovalScope"
import { RememberedApprovals } from "../approvals/RememberedApprovals"
import { Changes } from "../changes/Changes"
import { compactedLine, sentence } from "../commands/CommandWords"
import { INIT_PROMPT } from "../commands/ModelChoice"
import type { CommandHandlers } from "../commands/SlashCommands"
import type { Conversation } from "../sessions/Conversation"
import { importApprovals, isImportConfirm, permissionsCommand } from "../text/PermissionsText"
import type { Peer } from "./AcpApprover"
import { type AcpConnection, type AcpServices, clientDisplay, send } from "./Connection"
import { agentText } from "./ToolUpdates"
import { compactionUpdate } from "./TurnUpdates"
import { acpChanges, acpUndo } from "./Undo"

/** The slash commands the editor is offered (src/commands/SlashCommands.ts), each answered in the thread. */

const endTurn = { stopReason: "end_turn" } satisfies acp.PromptResponse

/** What the editor runs for a slash command: the thread, the conversation, and what followed the command. */
type AcpCommand = (
  peer: Peer,
  conversation: Conversation,
  arg: string,
  /** Runs a turn on a question mm wrote: `/init`'s. */
  ask: (question: string) => Effect.Effect<acp.PromptResponse, acp.RequestError, AcpServices | AcpConnection>
) => Effect.Effect<acp.PromptResponse, acp.RequestError, AcpServices | AcpConnection>

/** `/new`: the editor keeps its id; the conversation so far moves to a new one. */
const startOver = Effect.fn("Acp.startOver")(function*(peer: Peer, conversation: Conversation) {
  // the conversation's background jobs end with it
  yield* (yield* Jobs).end(conversation)
  const archived = yield* Effect.either(conversation.archiveAndReset)
  if (Either.isLeft(archived)) {
    yield* send(peer.client, peer.sessionId, [
      agentText(`Could not start over: ${archived.left.message}. The conversation goes on as it was.`)
    ])
    return endTurn
  }
  yield* Ref.set(conversation.allowed, [])
  const status = yield* conversation.status
  const text = status._tag === "Off"
    ? "Started a new conversation. The previous one was not kept: sessions are off (sessions.enabled: false)."
    : status._tag === "NotSaved"
    ? `Started a new conversation. The previous one was not kept: sessions cannot be saved (${status.reason}).`
    : archived.right === undefined
    ? "Started a new conversation (the previous one was empty: nothing to keep)."
    : [
      `Started a new conversation. The previous one is kept as session ${archived.right.id}: ${
        path.join(status.dir, `${archived.right.id}.json`)
      }`,
      ...archived.right.warnings
    ].join("\n\n")
  yield* send(peer.client, peer.sessionId, [agentText(text)])
  return endTurn
})

/** `/compact [hint]`: told as a `compaction_update` to an editor that shows them, as text otherwise. */
const compact = Effect.fn("Acp.compact")(function*(peer: Peer, conversation: Conversation, hint: string) {
  const agent = yield* Agent
  const done = yield* Effect.either(agent.compact(conversation, hint === "" ? undefined : hint))
  const told = Either.isLeft(done)
    ? done.left.message
    : sentence(compactedLine(done.right)) +
      (done.right._tag === "Compacted" && done.right.warning !== undefined ? `\n\n${done.right.warning}` : "")
  const shown = !(yield* clientDisplay).compaction || (Either.isRight(done) && done.right._tag === "Nothing")
    ? agentText(told)
    : compactionUpdate(Either.isLeft(done) ? { error: told } : { summary: told })
  yield* send(peer.client, peer.sessionId, [shown])
  return endTurn
})

/** The rows each conversation's last `/permissions import` showed: what `/permissions import confirm` imports. */
const shownImports = new WeakMap<Conversation, ReadonlyArray<Scope>>()

/** What the editor is told to send to import the rows just shown. */
const CONFIRM = "/permissions import confirm"

/**
 * `/permissions [rm n | import [confirm]]`: the same text as the terminal's, as the agent's
 * message. Commands are text, so an import takes two: `import` shows the rows, `import confirm`
 * imports those rows, and no others.
 */
const permissions: AcpCommand = (peer, conversation, arg) =>
  Effect.gen(function*() {
    const remembered = yield* RememberedApprovals
    const say = (text: string) => Effect.as(send(peer.client, peer.sessionId, [agentText(text)]), endTurn)
    if (isImportConfirm(arg)) {
      const shown = shownImports.get(conversation)
      shownImports.delete(conversation)
      if (shown === undefined) return yield* say("nothing to confirm: /permissions import shows the rows first")
      return yield* say((yield* importApprovals(remembered, conversation.cwd, shown)).text)
    }
    const outcome = yield* permissionsCommand(remembered, conversation, arg)
    if (outcome._tag === "Said") {
      shownImports.delete(conversation)
      return yield* say(outcome.text)
    }
    shownImports.set(conversation, outcome.scopes)
    return yield* say(`${outcome.text}\nsend ${CONFIRM} to import these ${outcome.scopes.length} approval(s)`)
  })

/** What the editor runs for each command it is offered. */
export const ACP_COMMANDS: CommandHandlers<"acp", AcpCommand> = {
  new: (peer, conversation) => startOver(peer, conversation),
  compact,
  init: (_peer, _conversation, _arg, ask) => ask(INIT_PROMPT),
  changes: (peer, conversation, arg) =>
    Effect.flatMap(Changes, (changes) => acpChanges(changes, peer, conversation, arg)),
  undo: (peer, conversation, arg) => Effect.flatMap(Changes, (changes) => acpUndo(changes, peer, conversation, arg)),
  permissions
}
