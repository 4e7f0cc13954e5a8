/**
 * The user's own commands (src/commands/UserCommands.ts) in an editor's thread: read when the
 * thread starts (`session/new`, `load`, `resume`, `fork`), each file skipped said on the log,
 * offered in `available_commands_update` after the built-in ones, and a prompt that starts with
 * one sent as the command's filled text.
 */
import type * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"

import { fillCommand, findUserCommand, readUserCommands, type UserCommands } from "../commands/UserCommands"
import { AppConfig } from "../config/Config"
import type { Conversation } from "../sessions/Conversation"
import { AcpConnection, send } from "./Connection"
import { availableCommands } from "./Prompt"
import { heldSession } from "./Sessions"

/** Each thread's commands, read once. */
const held = new WeakMap<Conversation, UserCommands>()

/** The thread's commands: read the first time they are asked for, the files skipped said on the log. */
export const ownCommandsOf = Effect.fn("Acp.ownCommands")(function*(conversation: Conversation) {
  const known = held.get(conversation)
  if (known !== undefined) return known
  const own = yield* readUserCommands(yield* AppConfig, conversation.cwd)
  const { log } = yield* AcpConnection
  for (const note of own.notes) log(note)
  held.set(conversation, own)
  return own
})

/** `available_commands_update`: mm's commands, then the user's own, with their argument hints. */
export const commandsUpdateOf = (conversation: Conversation) =>
  Effect.map(ownCommandsOf(conversation), (own): acp.SessionUpdate => ({
    sessionUpdate: "available_commands_update",
    availableCommands: [
      ...availableCommands,
      ...own.commands.map((command) => ({
        name: command.name,
        description: command.description === "" ? `from ${command.shown}` : command.description,
        ...(command.hint === "" ? {} : { input: { hint: command.hint } })
      }))
    ]
  }))

/** Tells the editor the commands of a thread it has just opened (by id). */
export const sendCommands = (client: acp.AgentContext, sessionId: string) =>
  Effect.gen(function*() {
    const session = yield* heldSession(sessionId)
    yield* send(client, sessionId, [yield* commandsUpdateOf(session.conversation)])
  }).pipe(Effect.catchAll(() => Effect.void))

/** Reads a thread's commands again and tells the editor: after the user trusted the project's. */
export const refreshOwnCommands = (client: acp.AgentContext, sessionId: string) =>
  Effect.gen(function*() {
    const session = yield* heldSession(sessionId)
    held.delete(session.conversation)
    yield* send(client, sessionId, [yield* commandsUpdateOf(session.conversation)])
  }).pipe(Effect.catchAll(() => Effect.void))

/** The filled text of the user's command a prompt's text starts with; undefined when it names none. */
export const expandOwnCommand = (conversation: Conversation, text: string) =>
  Effect.map(ownCommandsOf(conversation), (own) => {
    const found = findUserCommand(text, own.commands)
    return found === undefined ? undefined : fillCommand(found.command, found.arg)
  })
