import { fileURLToPath } from "node:url"

import type * as acp from "@agentclientprotocol/sdk"

import { commandsIn, type SlashCommandRecord, usageOf } from "../commands/SlashCommands"
import { IMAGE_MAX_BYTES, type ImageInput, isSentImageType } from "../domain/Images"
import { selectionLabel, selectionOf } from "./PromptBlocks"

/** A file URI as a path, any other URI as it is. */
const shownUri = (uri: string): string => {
  if (!uri.startsWith("file:")) return uri
  try {
    return fileURLToPath(uri)
  } catch {
    return uri
  }
}

/**
 * Text put together from pieces, a space between two where neither side has whitespace: the
 * pieces are kept and joined once, and only the last character is looked at, so that a prompt
 * of many blocks is put together in time linear in its size.
 */
const glued = () => {
  const parts: Array<string> = []
  let last = ""
  return {
    add: (right: string) => {
      if (right === "") return
      if (last !== "" && !/\s/.test(last) && !/^\s/.test(right)) parts.push(" ")
      parts.push(right)
      last = right[right.length - 1]
    },
    text: () => parts.join("")
  }
}

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
  const inline = glued()
  const context: Array<string> = []
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        inline.add(block.text)
        break
      case "resource_link": {
        const selection = selectionOf(block.uri)
        const lines = selections.get(block.uri)
        if (selection === undefined) {
          inline.add(`@${shownUri(block.uri)}`)
          break
        }
        const label = selectionLabel(selection, cwd)
        inline.add(`@${label}`)
        if (lines !== undefined) context.push(`<context ref="${label}">\n${lines}\n</context>`)
        break
      }
      case "resource": {
        const uri = shownUri(block.resource.uri)
        if ("text" in block.resource) {
          inline.add(`@${uri}`)
          context.push(`<context ref="${uri}">\n${block.resource.text}\n</context>`)
        } else {
          inline.add(`@${uri} (binary content not included)`)
        }
        break
      }
      case "image":
        // sent beside the text (promptImages), or said not to be
        if (!isSentImageType(block.mimeType)) inline.add(`(image of type ${block.mimeType} not included)`)
        break
      case "audio":
        inline.add(`(audio not included: mm reads text only)`)
        break
    }
  }
  return [inline.text(), ...context].filter((part) => part.trim() !== "").join("\n\n")
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

/** The commands offered to the editor, as `available_commands_update` announces them (src/commands/SlashCommands.ts). */
export const availableCommands: Array<acp.AvailableCommand> = commandsIn("acp").map((command) => ({
  name: command.name,
  description: command.description,
  ...(command.hint === "" ? {} : { input: { hint: command.argument ?? command.hint } })
}))

/**
 * What a `/word` that is not one of the editor's commands gets: why (unknown, or the
 * terminal's, with what does its job here), then the commands offered here, one a line.
 */
export const notACommandText = (read: { readonly word: string; readonly record?: SlashCommandRecord }): string => {
  const why = read.record === undefined
    ? `Unknown command ${read.word}.`
    : `${read.word} is a terminal command${read.record.elsewhere === undefined ? "" : `: ${read.record.elsewhere}`}.`
  return [
    `${why} The commands here:`,
    ...commandsIn("acp").map((command) => `- \`${usageOf(command)}\` — ${command.description}`)
  ].join("\n")
}
