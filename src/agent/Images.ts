/**
 * Images with a question: kept as checkpoint blobs (named by hash, so the session file stays
 * readable) and sent as `image_url` parts with data URLs when the model can see —
 * `model.vision`, else what the server says; otherwise the user is told in one line and the
 * model reads a short note in their place.
 */
import * as Effect from "effect/Effect"

import type { CheckpointsShape } from "../changes/Checkpoints"
import { type ImageInput, imagesNote, imagesNotSent } from "../domain/Images"
import { type ImageRef, type Message, toWire, type WireMessage, type WirePart } from "../domain/Session"
import type { Conversation } from "../sessions/Conversation"
import type { Deps, Emit } from "./Deps"

/** Whether the model can see images: `model.vision` when set, else the server's word, else no. */
const canSee = (deps: Deps): Effect.Effect<boolean> =>
  deps.config.model.vision !== undefined
    ? Effect.succeed(deps.config.model.vision)
    // what the server says of the model arrives in the background: waited for a moment at most
    : Effect.zipRight(deps.model.settledWindow, Effect.map(deps.model.vision, (said) => said === true))

/** The question's message: with its images kept as blobs, or with the note that they were not sent. */
export const questionMessage = Effect.fn("Agent.questionMessage")(function*(
  deps: Deps,
  checkpoints: CheckpointsShape,
  conversation: Conversation,
  question: string,
  images: ReadonlyArray<ImageInput>,
  emit: Emit
) {
  if (images.length === 0) return { role: "user", content: question } satisfies Message
  const names = images.map((image) => image.name)
  if (!(yield* canSee(deps))) {
    yield* emit({ _tag: "Notice", text: imagesNotSent(names, deps.model.model) })
    return { role: "user", content: `${question}\n\n${imagesNote(names)}` } satisfies Message
  }
  const persist = (yield* conversation.status)._tag !== "Off"
  const refs: Array<ImageRef> = []
  for (const image of images) {
    const { hash, warning } = yield* checkpoints.put(conversation.cwd, image.bytes, persist)
    if (warning !== undefined) yield* emit({ _tag: "Notice", text: warning })
    refs.push({ blob: hash, mime: image.mime, name: image.name })
  }
  return { role: "user", content: question, images: refs } satisfies Message
})

/** One message as sent: its images (if any) read from their blobs into data URLs. */
const wireOf = (checkpoints: CheckpointsShape, cwd: string, message: Message): Effect.Effect<WireMessage> => {
  const wire = toWire(message)
  const images = message.images ?? []
  if (images.length === 0) return Effect.succeed(wire)
  return Effect.map(
    Effect.forEach(images, (image) =>
      checkpoints.get(cwd, image.blob).pipe(
        Effect.map((bytes): WirePart => ({
          type: "image_url",
          image_url: { url: `data:${image.mime};base64,${bytes.toString("base64")}` }
        })),
        Effect.orElseSucceed((): WirePart => ({
          type: "text",
          text: `[the image ${image.name} is no longer in .mm/checkpoints]`
        }))
      )),
    (parts): WireMessage => ({ ...wire, content: [{ type: "text", text: message.content ?? "" }, ...parts] })
  )
}

/** The messages as sent, images included. */
export const wireMessages = (
  checkpoints: CheckpointsShape,
  cwd: string,
  messages: ReadonlyArray<Message>
): Effect.Effect<Array<WireMessage>> => Effect.forEach(messages, (message) => wireOf(checkpoints, cwd, message))
