import * as path from "node:path"
import { fileURLToPath } from "node:url"

import type * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { Checkpoints } from "../changes/Checkpoints"
import type { EditorBlock } from "../domain/Session"
import { FileAccess } from "../tools/FileAccess"

/**
 * A prompt's blocks as the editor sent them: the lines a selection mention points at (read
 * for the model), the blocks as kept in the session file (large texts and images as blobs),
 * and those blocks told again on `session/load`.
 */

/** Text kept inline in the session file up to this size; larger goes to a blob. */
const INLINE_TEXT_BYTES = 8 * 1024
/** The most of a selection the model is given. */
const SELECTION_MAX_LINES = 2000

interface Selection {
  /** Absolute path of the file. */
  readonly file: string
  /** First and last line, 1-based, inclusive. */
  readonly start: number
  readonly end: number
}

/** The lines a `file:` link points at, as editors write them: `#L2:3` (Zed), `#L2-3`, `#L2-L3`, `#L2`. */
export const selectionOf = (uri: string): Selection | undefined => {
  if (!uri.startsWith("file:")) return undefined
  const hash = uri.indexOf("#")
  if (hash < 0) return undefined
  const match = /^L(\d+)(?:[-:]L?(\d+))?$/.exec(uri.slice(hash + 1))
  if (match === null) return undefined
  let file: string
  try {
    file = fileURLToPath(uri.slice(0, hash))
  } catch {
    return undefined
  }
  const start = Number(match[1])
  const end = match[2] === undefined ? start : Number(match[2])
  if (start < 1 || end < start) return undefined
  return { file, start, end }
}

/** `path:2-3` (or `path:2`), the file relative to the project when it is inside. */
export const selectionLabel = (selection: Selection, cwd: string): string => {
  const relative = path.relative(cwd, selection.file)
  const shown = relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative) ? relative : selection.file
  return selection.start === selection.end
    ? `${shown}:${selection.start}`
    : `${shown}:${selection.start}-${selection.end}`
}

/**
 * The selected lines of each link with a range, read through the editor's files when it offers
 * them. A selection `leftOut` gives a reason for (a file that looks secret, not allowed:
 * SecretSelections.ts) is not read: the model is given that reason instead, and so is the
 * editor (`withheld` of the result).
 */
export const readSelections = Effect.fn("Acp.readSelections")(function*(
  blocks: ReadonlyArray<acp.ContentBlock>,
  cwd: string,
  leftOut: (file: string, label: string) => Effect.Effect<string | undefined> = () => Effect.succeed(undefined)
) {
  const files = yield* FileAccess
  const texts = new Map<string, string>()
  const withheld: Array<string> = []
  for (const block of blocks) {
    if (block.type !== "resource_link" || texts.has(block.uri)) continue
    const selection = selectionOf(block.uri)
    if (selection === undefined) continue
    const label = selectionLabel(selection, cwd)
    const why = yield* leftOut(selection.file, label)
    if (why !== undefined) {
      texts.set(block.uri, `[${why}]`)
      withheld.push(why)
      continue
    }
    const read = yield* files.read(selection.file, label)
    if (Either.isLeft(read)) continue
    const last = Math.min(selection.end, selection.start + SELECTION_MAX_LINES - 1)
    texts.set(block.uri, read.right.split("\n").slice(selection.start - 1, last).join("\n"))
  }
  return { texts: texts as ReadonlyMap<string, string>, withheld: withheld as ReadonlyArray<string> }
})

const definedOnly = (block: Record<string, unknown>): EditorBlock =>
  Object.fromEntries(Object.entries(block).filter(([, value]) => value !== undefined)) as unknown as EditorBlock

/** A text kept inline when small, else in a blob (sessions off: in memory, like other blobs). */
const keptText = (
  text: string,
  cwd: string,
  persist: boolean
): Effect.Effect<{ readonly text: string } | { readonly blob: string }, never, Checkpoints> =>
  Buffer.byteLength(text) <= INLINE_TEXT_BYTES
    ? Effect.succeed({ text })
    : Effect.map(Effect.flatMap(Checkpoints, (c) => c.put(cwd, Buffer.from(text, "utf8"), persist)), (kept) => ({
      blob: kept.hash
    }))

const keptBytes = (base64: string, cwd: string, persist: boolean) =>
  Effect.map(Effect.flatMap(Checkpoints, (c) => c.put(cwd, Buffer.from(base64, "base64"), persist)), (kept) => ({
    blob: kept.hash
  }))

/** One block as the session file keeps it. */
const recordBlock = (
  block: acp.ContentBlock,
  cwd: string,
  persist: boolean
): Effect.Effect<EditorBlock, never, Checkpoints> => {
  switch (block.type) {
    case "text":
      return Effect.succeed(definedOnly({ type: "text", text: block.text }))
    case "resource_link":
      return Effect.succeed(
        definedOnly({
          type: "resource_link",
          uri: block.uri,
          name: block.name,
          title: block.title ?? undefined,
          mimeType: block.mimeType ?? undefined
        })
      )
    case "resource": {
      const resource = block.resource
      const base = { type: "resource", uri: resource.uri, mimeType: resource.mimeType ?? undefined }
      return "text" in resource
        ? Effect.map(keptText(resource.text, cwd, persist), (kept) => definedOnly({ ...base, ...kept }))
        : Effect.map(keptBytes(resource.blob, cwd, persist), (kept) => definedOnly({ ...base, ...kept, binary: true }))
    }
    case "image":
    case "audio":
      return Effect.map(
        keptBytes(block.data, cwd, persist),
        (kept) =>
          definedOnly({
            type: block.type,
            mimeType: block.mimeType,
            ...kept,
            uri: "uri" in block ? block.uri ?? undefined : undefined
          })
      )
  }
}

/** The blocks of a prompt as the session file keeps them. */
export const recordBlocks = (blocks: ReadonlyArray<acp.ContentBlock>, cwd: string, persist: boolean) =>
  Effect.forEach(blocks, (block) => recordBlock(block, cwd, persist))

/** A kept block's text or bytes, read back from its blob; undefined when the blob is gone. */
const blobOf = (cwd: string, hash: string) =>
  Effect.flatMap(Checkpoints, (c) => Effect.option(c.get(cwd, hash))).pipe(
    Effect.map((bytes) => (bytes._tag === "Some" ? bytes.value : undefined))
  )

const missing = (block: EditorBlock): acp.ContentBlock => ({
  type: "text",
  text: `(${block.type}${block.uri === undefined ? "" : ` ${block.uri}`}: its content is no longer kept)`
})

/** One kept block as the editor sent it. */
const replayBlock = (block: EditorBlock, cwd: string): Effect.Effect<acp.ContentBlock, never, Checkpoints> => {
  const uri = block.uri ?? ""
  const mimeType = block.mimeType === undefined ? {} : { mimeType: block.mimeType }
  switch (block.type) {
    case "text":
      return Effect.succeed({ type: "text", text: block.text ?? "" })
    case "resource_link":
      return Effect.succeed({
        type: "resource_link",
        uri,
        name: block.name ?? uri,
        ...(block.title === undefined ? {} : { title: block.title }),
        ...mimeType
      })
    case "resource":
      if (block.blob === undefined) {
        return Effect.succeed({ type: "resource", resource: { uri, text: block.text ?? "", ...mimeType } })
      }
      return Effect.map(blobOf(cwd, block.blob), (bytes): acp.ContentBlock =>
        bytes === undefined
          ? missing(block)
          : block.binary === true
          ? { type: "resource", resource: { uri, blob: bytes.toString("base64"), ...mimeType } }
          : { type: "resource", resource: { uri, text: bytes.toString("utf8"), ...mimeType } })
    case "image":
    case "audio": {
      const type = block.type
      if (block.blob === undefined) return Effect.succeed(missing(block))
      return Effect.map(blobOf(cwd, block.blob), (bytes): acp.ContentBlock =>
        bytes === undefined
          ? missing(block)
          : { type, data: bytes.toString("base64"), mimeType: block.mimeType ?? "application/octet-stream" })
    }
    default:
      return Effect.succeed({ type: "text", text: block.text ?? "" })
  }
}

/** The `user_message_chunk`s of a question asked from an editor: its blocks, one per chunk. */
export const replayBlocks = (blocks: ReadonlyArray<EditorBlock>, cwd: string) =>
  Effect.forEach(blocks, (block) =>
    Effect.map(replayBlock(block, cwd), (content): acp.SessionUpdate => ({
      sessionUpdate: "user_message_chunk",
      content
    })))
