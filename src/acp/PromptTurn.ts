import * as acp from "@agentclientprotocol/sdk"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as SynchronizedRef from "effect/SynchronizedRef"

import { Agent } from "../agent/Agent"
import { readCommand } from "../commands/SlashCommands"
import { type ImageInput, isSentImageType } from "../domain/Images"
import type { Conversation } from "../sessions/Conversation"
import { ToolRegistry } from "../tools/Registry"
import { CurrentPeer, type Peer } from "./AcpApprover"
import { ACP_COMMANDS } from "./Commands"
import { AcpConnection, type AcpServices, type AcpSession, clientDisplay, type PromptFiber, send } from "./Connection"
import { expandOwnCommand } from "./OwnCommands"
import { askProjectTrust } from "./ProjectTrustAsk"
import { notACommandText, promptImages, promptText } from "./Prompt"
import { readSelections, recordBlocks } from "./PromptBlocks"
import { numberPrompt } from "./PromptOrder"
import { secretSelectionCheck } from "./SecretSelections"
import { heldSession } from "./Sessions"
import { agentText } from "./ToolUpdates"
import { makeTurnRenderer } from "./TurnUpdates"

/** `session/prompt`: a turn of the agent, or a slash command, run until it ends or is cancelled. */

const endTurn = { stopReason: "end_turn" } satisfies acp.PromptResponse

/** What the thread is told when a prompt held blocks the model cannot be given. */
export const droppedBlocksText = (blocks: ReadonlyArray<acp.ContentBlock>): string | undefined => {
  const dropped = [
    ...new Set(
      blocks.filter((b) => b.type === "audio" || (b.type === "image" && !isSentImageType(b.mimeType))).map((b) =>
        b.type === "image" ? `image (${b.mimeType})` : b.type
      )
    )
  ]
  if (dropped.length === 0) return undefined
  return `(${
    dropped.join(" and ")
  } not sent to the model: mm sends text and PNG, JPEG, GIF or WebP images; the rest of the prompt was sent)`
}

/** A question for the agent: its events told to the editor as they come. */
const turn = Effect.fn("Acp.turn")(function*(
  peer: Peer,
  conversation: Conversation,
  question: string,
  images: ReadonlyArray<ImageInput>,
  blocks: ReadonlyArray<acp.ContentBlock>
) {
  const agent = yield* Agent
  const titleBefore = (yield* conversation.snapshot).title
  const renderer = makeTurnRenderer(conversation.cwd, yield* clientDisplay, yield* ToolRegistry)
  const dropped = droppedBlocksText(blocks)
  if (dropped !== undefined) yield* send(peer.client, peer.sessionId, [agentText(`${dropped}\n\n`)])
  const status = yield* conversation.status
  // a prompt of one text block is its question as it stands: nothing more to keep
  const plain = blocks.length === 1 && blocks[0].type === "text" && blocks[0].text === question
  const kept = plain ? undefined : yield* recordBlocks(blocks, conversation.cwd, status._tag === "Saving")
  yield* agent.turn(conversation, question, images, kept).pipe(
    Stream.runForEach((event) => send(peer.client, peer.sessionId, renderer.render(event))),
    Effect.onInterrupt(() => send(peer.client, peer.sessionId, renderer.closeOpenCalls()))
  )
  const after = yield* conversation.snapshot
  if (titleBefore === "" && after.title !== "") {
    yield* send(peer.client, peer.sessionId, [{
      sessionUpdate: "session_info_update",
      title: after.title,
      updatedAt: after.updatedAt
    }])
  }
  const failure = renderer.failure()
  // a failed generation is an error of the prompt, as other ACP agents answer it (docs/reference/acp.md)
  if (failure !== undefined) {
    return yield* Effect.fail(new acp.RequestError(-32603, failure.message, { reason: failure.reason }))
  }
  return { stopReason: renderer.stopReason() ?? "end_turn" } satisfies acp.PromptResponse
})

/** The editor thread a prompt runs for, as the approver and the editor's file access see it. */
const peerOf = Effect.fn("Acp.peerOf")(function*(session: AcpSession, client: acp.AgentContext) {
  const connection = yield* AcpConnection
  const capabilities = yield* Ref.get(connection.capabilities)
  const peer: Peer = {
    sessionId: session.id,
    cwd: session.conversation.cwd,
    client,
    log: connection.log,
    ...(capabilities === undefined ? {} : { capabilities })
  }
  return peer
})

/** What a prompt's text asks for: a turn, a slash command, or nothing (a blank prompt). */
const answerOf = (
  peer: Peer,
  conversation: Conversation,
  blocks: ReadonlyArray<acp.ContentBlock>
): Effect.Effect<acp.PromptResponse, acp.RequestError, AcpServices | AcpConnection> =>
  Effect.locally(
    Effect.gen(function*() {
      // the project's settings that wait for trust are asked about before the first answer
      yield* askProjectTrust(peer)
      const selections = yield* readSelections(
        blocks,
        conversation.cwd,
        yield* secretSelectionCheck(peer, conversation)
      )
      if (selections.withheld.length > 0) {
        yield* send(peer.client, peer.sessionId, selections.withheld.map((line) => agentText(line)))
      }
      const text = promptText(blocks, selections.texts, conversation.cwd)
      // the user's own command: its filled text is the question, as if typed (a built-in name wins)
      const read = readCommand(text, "acp")
      const own = read === undefined || read._tag === "Unknown"
        ? yield* expandOwnCommand(conversation, text)
        : undefined
      if (own !== undefined && promptImages(blocks).images.length === 0) return yield* ask(peer, conversation)(own)
      return yield* answerText(peer, conversation, blocks, text)
    }),
    CurrentPeer,
    peer
  )

const answerText = (
  peer: Peer,
  conversation: Conversation,
  blocks: ReadonlyArray<acp.ContentBlock>,
  text: string
): Effect.Effect<acp.PromptResponse, acp.RequestError, AcpServices | AcpConnection> => {
  const { images, refused } = promptImages(blocks)
  const command = images.length > 0 ? undefined : readCommand(text, "acp")
  const program: Effect.Effect<acp.PromptResponse, acp.RequestError, AcpServices | AcpConnection> =
    text.trim() === "" && images.length === 0
      ? Effect.succeed(endTurn)
      : command === undefined
      ? Effect.zipRight(
        refused.length === 0 ? Effect.void : send(peer.client, peer.sessionId, refused.map((line) => agentText(line))),
        turn(peer, conversation, text, images, blocks)
      )
      : command._tag === "Command"
      ? ACP_COMMANDS[command.name](peer, conversation, command.arg, ask(peer, conversation))
      : Effect.as(send(peer.client, peer.sessionId, [agentText(notACommandText(command))]), endTurn)
  return program
}

/** A turn on a question mm wrote (`/init`, the user's own commands), kept as a plain text prompt. */
const ask = (peer: Peer, conversation: Conversation) => (question: string) =>
  turn(peer, conversation, question, [], [{ type: "text", text: question }])

/** Resumes when the SDK aborts the request (the editor cancelled it, or went away). */
const aborted = (signal: AbortSignal) =>
  Effect.async<void>((resume) => {
    const onAbort = () => resume(Effect.void)
    signal.addEventListener("abort", onAbort)
    return Effect.sync(() => signal.removeEventListener("abort", onAbort))
  })

/** How the prompt ended: by itself, or interrupted when its request is aborted (once it has stopped). */
const promptEnd = (fiber: PromptFiber, signal: AbortSignal) =>
  Effect.raceFirst(Fiber.await(fiber), Effect.zipRight(aborted(signal), Fiber.interrupt(fiber)))

const alreadyRunning = (sessionId: string) =>
  acp.RequestError.invalidRequest(
    { sessionId },
    "a prompt is already running in this session; wait for its answer or send session/cancel"
  )

/**
 * `session/prompt`: one prompt at a time in a thread, run in a fiber of its own that
 * `session/cancel` (or an aborted request) interrupts; a cancelled prompt answers `cancelled`.
 * `number`: its place among the prompts that arrived (PromptOrder.ts), so that only a cancel
 * that arrived after it stops it.
 */
export const prompt = Effect.fn("Acp.prompt")(function*(
  params: acp.PromptRequest,
  client: acp.AgentContext,
  signal: AbortSignal,
  number?: number
) {
  const session = yield* heldSession(params.sessionId)
  const program = answerOf(yield* peerOf(session, client), session.conversation, params.prompt)
  const fiber = yield* SynchronizedRef.modifyEffect(session.running, (running) =>
    running !== undefined
      ? Effect.fail(alreadyRunning(session.id))
      : Effect.map(Effect.forkDaemon(program), (started) => {
        numberPrompt(started, number)
        return [started, started] as const
      }))
  const exit = yield* promptEnd(fiber, signal).pipe(
    Effect.ensuring(SynchronizedRef.update(session.running, (running) => (running === fiber ? undefined : running)))
  )
  if (Exit.isSuccess(exit)) return exit.value
  if (Cause.isInterruptedOnly(exit.cause)) return { stopReason: "cancelled" } satisfies acp.PromptResponse
  return yield* Effect.failCause(exit.cause)
})
