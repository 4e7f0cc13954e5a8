import { fileURLToPath } from "node:url"

import type * as acp from "@agentclientprotocol/sdk"

import { IMAGE_MAX_BYTES, type ImageInput, isSentImageType } from "../domain/Images"
import { selectionLabel, selectionOf } from "./PromptBlocks"

/** A file URI as a path, any other URI as it is. */
export const shownUri = (uri: string): string => {
  if (!uri.startsWith("file:")) return uri
  try {
    return fileURLToPath(uri)
  } catch {
    return uri
  }
}

const glue = (left: string, right: string): string =>
  left === "" || right === "" || /\s$/.test(left) || /^\s/.test(right) ? left + right : `${left} ${right}`

/**
 * The question a prompt asks, as one text: text blocks and links inline, the contents of
 * embedded resources and the lines of selection mentions (`selections`, by uri) after it,
 * each in a `<context>` block naming where it came from (`path:2-3` for a selection).
 */
export const promptText = (
  blocks: ReadonlyArray<acp.ContentBlock>,
  selections: ReadonlyMap<string, string> = new Map(),
  cwd: string = process.cwd()
): string => {
  let inline = ""
  const context: Array<string> = []
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        inline = glue(inline, block.text)
        break
      case "resource_link": {
        const selection = selectionOf(block.uri)
        const lines = selections.get(block.uri)
        if (selection === undefined) {
          inline = glue(inline, `@${shownUri(block.uri)}`)
          break
        }
        const label = selectionLabel(selection, cwd)
        inline = glue(inline, `@${label}`)
        if (lines !== undefined) context.push(`<context ref="${label}">\n${lines}\n</context>`)
        break
      }
      case "resource": {
        const uri = shownUri(block.resource.uri)
        if ("text" in block.resource) {
          inline = glue(inline, `@${uri}`)
          context.push(`<context ref="${uri}">\n${block.resource.text}\n</context>`)
        } else {
          inline = glue(inline, `@${uri} (binary content not included)`)
        }
        break
      }
      case "image":
        // sent beside the text (promptImages), or said not to be
        if (!isSentImageType(block.mimeType)) inline = glue(inline, `(image of type ${block.mimeType} not included)`)
        break
      case "audio":
        inline = glue(inline, `(audio not included: mm reads text only)`)
        break
    }
  }
  return [inline, ...context].filter((part) => part.trim() !== "").join("\n\n")
}

/** The images of a prompt that mm sends (png, jpeg, gif, webp, within the size cap), and lines for the others. */
export const promptImages = (
  blocks: ReadonlyArray<acp.ContentBlock>
): { readonly images: ReadonlyArray<ImageInput>; readonly refused: ReadonlyArray<string> } => {
  const images: Array<ImageInput> = []
  const refused: Array<string> = []
  for (const [index, block] of blocks.entries()) {
    if (block.type !== "image" || !isSentImageType(block.mimeType)) continue
    const name = block.uri !== undefined && block.uri !== null ? shownUri(block.uri) : `image ${index + 1}`
    const bytes = Buffer.from(block.data, "base64")
    if (bytes.length > IMAGE_MAX_BYTES) {
      refused.push(`${name} is ${bytes.length} bytes, more than ${IMAGE_MAX_BYTES} can be sent (not sent)`)
    } else images.push({ name, mime: block.mimeType.toLowerCase(), bytes })
  }
  return { images, refused }
}

export type SlashCommand =
  | { readonly name: "new" }
  | { readonly name: "compact"; readonly hint: string | undefined }
  | { readonly name: "changes"; readonly arg: string }
  | { readonly name: "undo"; readonly arg: string }
  | { readonly name: "permissions"; readonly arg: string }
  | { readonly name: "unknown"; readonly word: string }

/**
 * `/new`, `/compact [hint]`, `/changes [N]` and `/undo [N]`, the commands announced to the editor. Any other `/word`
 * standing alone at the start is an unknown command; text such as `/etc/hosts …` is a question.
 */
export const parseCommand = (text: string): SlashCommand | undefined => {
  const match = /^\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/.exec(text.trim())
  if (match === null) return undefined
  switch (match[1]) {
    case "new":
      return { name: "new" }
    case "compact": {
      const hint = match[2]?.trim() ?? ""
      return { name: "compact", hint: hint === "" ? undefined : hint }
    }
    case "changes":
    case "undo":
    case "permissions":
      return { name: match[1], arg: match[2]?.trim() ?? "" }
    default:
      return { name: "unknown", word: `/${match[1]}` }
  }
}

/** What an unknown command gets; the terminal's own commands are named for what replaces them here. */
export const unknownCommandText = (word: string): string =>
  word === "/sessions" || word === "/resume"
    ? `${word} is a terminal command: here the editor lists its threads and reloads them itself. Commands: /new, /compact, /changes, /undo.`
    : `Unknown command ${word}. Commands: /new (start over, keeping this conversation on disk), /compact [hint] (summarise older turns), ` +
      "/changes [N] (what mm changed in files, by turn), /undo [N] (take back the files changed by the last turn), " +
      "/permissions [rm N] (the approvals remembered for this project)."

export const availableCommands: Array<acp.AvailableCommand> = [
  {
    name: "new",
    description: "start over in this thread; the conversation so far is kept on disk under a new session id"
  },
  {
    name: "compact",
    description: "replace the older turns by a summary to free context",
    input: { hint: "what the summary should focus on (optional)" }
  },
  {
    name: "changes",
    description:
      "list the files write_file and edit_file changed in this thread, by turn (bash is not tracked); with a turn number, show its diffs",
    input: { hint: "a turn number (optional)" }
  },
  {
    name: "undo",
    description:
      "take back the files mm's file tools changed in the last turn (or the last N turns), after showing the diffs",
    input: { hint: "how many turns to take back (optional, default 1)" }
  },
  {
    name: "permissions",
    description: "list the approvals remembered for this project (\"always\" answers); rm N revokes one",
    input: { hint: "rm N to revoke one (optional)" }
  }
]
