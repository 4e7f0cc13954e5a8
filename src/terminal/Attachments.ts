import * as path from "node:path"

import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Ref from "effect/Ref"

import { secretsAsked } from "../approvals/SessionSettings"
import { AppConfig } from "../config/Config"
import { IMAGE_MAX_BYTES, type ImageInput, imageMimeOf } from "../domain/Images"
import { SHELL_CONTEXT_HEAD } from "../domain/Turns"
import { sanitize } from "../text/Sanitize"
import { type ReadRefusal, readRegularFile } from "../tools/RegularRead"
import { secretFilesOf } from "../tools/SecretFiles"
import type { CommandContext } from "./Commands"
import type { Printer } from "./TerminalIO"

/** A file larger than this is not attached: the model is better served by read_file's ranges. */
const ATTACH_MAX_BYTES = 256 * 1024

/** `word` without the punctuation that ends a sentence around it (`.,;:!?)`), looked at from its end. */
const withoutTrailingPunctuation = (word: string): string => {
  let end = word.length
  while (end > 0 && ".,;:!?)".includes(word[end - 1])) end--
  return word.slice(0, end)
}

/** `@path` words of a question: `@` at the start of a word. */
const mentions = (question: string): Array<string> =>
  [...question.matchAll(/(?:^|\s)@(\S+)/g)].map((match) => withoutTrailingPunctuation(match[1]))

type Attached =
  | {
    readonly _tag: "Ready"
    readonly text: string
    readonly files: ReadonlyArray<string>
    /** `@shot.png` (and jpg, gif, webp): sent as images, not as text. */
    readonly images: ReadonlyArray<ImageInput>
  }
  | { readonly _tag: "Problem"; readonly line: string }

/** The one line that says why `@file` was not attached. */
const refusalLine = (file: string, refusal: ReadRefusal, max: number): string => {
  switch (refusal._tag) {
    case "Missing":
      return `@${file}: no such file (nothing was sent)`
    case "Directory":
      return `@${file} is a directory; name a file (nothing was sent)`
    case "NotRegular":
      return `@${file} is ${refusal.kind}; only regular files can be attached (nothing was sent)`
    case "TooBig":
      return `@${file} is ${refusal.size} bytes, more than ${max} can be attached (nothing was sent)`
    case "Unreadable":
      return `@${file}: ${refusal.code === "EACCES" ? "permission denied" : "cannot read it"} (nothing was sent)`
  }
}

/**
 * The question with the text of each `@path` it names appended, as the model will see it.
 * Only a regular file is read (a FIFO or a device is refused unopened), its size checked
 * before a byte is read, a piece at a time: interrupting the effect stops the read. A
 * missing, unreadable, binary or too large file is a problem said before anything is sent.
 */
export const attachFiles = (cwd: string, question: string): Effect.Effect<Attached> =>
  Effect.gen(function*() {
    const files = [...new Set(mentions(question))]
    const parts: Array<string> = []
    const images: Array<ImageInput> = []
    for (const file of files) {
      const mime = imageMimeOf(file)
      const max = mime === undefined ? ATTACH_MAX_BYTES : IMAGE_MAX_BYTES
      const read = yield* readRegularFile(path.resolve(cwd, file), max)
      if (Either.isLeft(read)) return { _tag: "Problem", line: refusalLine(file, read.left, max) } as const
      const bytes = read.right
      if (mime !== undefined) {
        images.push({ name: file, mime, bytes })
        continue
      }
      if (bytes.includes(0)) return { _tag: "Problem", line: `@${file} is not a text file (nothing was sent)` } as const
      parts.push(`<file path="${file}">\n${bytes.toString("utf8")}${bytes.at(-1) === 10 ? "" : "\n"}</file>`)
    }
    return {
      _tag: "Ready",
      text: parts.length === 0 ? question : `${question}\n\n${parts.join("\n\n")}`,
      files,
      images
    } as const
  })

/**
 * Whether the files a question attaches may be read: a file that looks secret
 * (tools/SecretFiles.ts) is asked first, y or n, in every mode but `allow`, and refused with
 * one line when stdin is not a terminal. False when nothing may be sent.
 */
export const secretAttachmentsAllowed = (
  terminal: Pick<CommandContext, "cwd" | "conversation" | "input" | "style" | "notice"> & { readonly info: Printer },
  question: string
) =>
  Effect.gen(function*() {
    const files = [...new Set(mentions(question))]
    if (files.length === 0) return true
    const { config } = yield* AppConfig
    const secrets = yield* secretFilesOf(terminal.cwd, config.secrets)
    const reasons = files.flatMap((file) => secrets.reason(file) ?? [])
    if (reasons.length === 0) return true
    const { mode } = yield* Ref.get(terminal.conversation.settings)
    if (!secretsAsked(config.permissions, mode)) return true
    if (!terminal.input.interactive) {
      terminal.notice(`${reasons[0]}: not attached, no terminal to ask (nothing was sent)`)
      return false
    }
    const { info, style } = terminal
    for (const reason of reasons) info.line(style.yellow(sanitize(`${reason}: its content would go to the model`)))
    const prompt = `attach ${reasons.length === 1 ? "it" : "them"}? [y/n] `
    const answer = yield* Effect.promise(() => terminal.input.key(style.yellow(prompt), ["y", "n"]))
    if (answer === "y") return true
    terminal.notice("not attached (nothing was sent)")
    return false
  })

/** The user message that keeps a `!command` line and its output in the conversation. */
export const shellContext = (command: string, output: string): string =>
  `${SHELL_CONTEXT_HEAD}\n$ ${command}\n${output}`
