/**
 * The terminal's question about a project's configuration (SPEC §14, project trust): what its
 * guarded settings would do, then `trust this configuration? [y/N]`. The project's own slash
 * commands not trusted yet (commands/UserCommands.ts) are one more line of the same question,
 * or the question's only line when no setting waits. Asked before anything starts (MCP
 * servers, the model, the terminal's own input), on stderr, read as one line. `y` records the
 * trust (config/TrustStore.ts) and applies them; any other answer runs without them, with the
 * line that says what was left out (the commands' own line comes at start, from the REPL).
 * Loaded only when there is something to ask.
 */
import * as Effect from "effect/Effect"

import { commandsQuestionLine, type ProjectCommands } from "../commands/UserCommands"
import type { LoadedConfig } from "../config/Config"
import { ignoredLine, questionLines, type UntrustedSettings } from "../config/ProjectTrust"
import { recordCommandsTrust, recordTrust } from "../config/TrustStore"
import { nodeReadline } from "../lib/NodeModules"

export const TRUST_QUESTION = "trust this configuration? [y/N] "
export const COMMANDS_QUESTION = "trust this project's commands? [y/N] "

/** One line read from the terminal after `question`; "" when stdin ends first; undefined for Ctrl-C. */
const answerTo = (question: string): Promise<string | undefined> =>
  new Promise((resolve) => {
    const rl = nodeReadline().createInterface({ input: process.stdin, output: process.stderr })
    let answered = false
    rl.question(question, (answer) => {
      answered = true
      rl.close()
      resolve(answer)
    })
    rl.on("SIGINT", () => {
      answered = true
      process.stderr.write("\n")
      rl.close()
      resolve(undefined)
    })
    rl.on("close", () => {
      if (!answered) resolve("")
    })
  })

const say = (line: string) => process.stderr.write(`${line}\n`)

/** What is asked about: the project's guarded settings, its commands, or both. */
export interface TrustAsked {
  readonly untrusted?: UntrustedSettings | undefined
  readonly commands?: ProjectCommands | undefined
}

const linesOf = ({ commands, untrusted }: TrustAsked): Array<string> => [
  ...(untrusted === undefined
    ? ["This project has its own slash commands. They are offered only once you trust them:"]
    : questionLines(untrusted.shown, untrusted.settings)),
  ...(commands === undefined ? [] : [commandsQuestionLine(commands)])
]

/** Records what was trusted; the line that says where (or that it could not be). */
const record = ({ commands, untrusted }: TrustAsked, cwd: string): string => {
  try {
    let file = ""
    if (commands !== undefined) file = recordCommandsTrust(cwd, commands.folder, commands.hash)
    if (untrusted !== undefined) file = recordTrust(cwd, untrusted.file, untrusted.hash)
    return `trusted: remembered in ${file} (delete it to be asked again)`
  } catch (cause) {
    return `mm: trusted for this run, but not remembered: ${cause instanceof Error ? cause.message : String(cause)}`
  }
}

/**
 * Asks whether to trust the project's guarded settings and its commands; the configuration to
 * run with, or undefined when Ctrl-C ends mm.
 */
export const askTrust = (
  loaded: LoadedConfig,
  asked: TrustAsked,
  cwd: string
): Effect.Effect<LoadedConfig | undefined> =>
  Effect.promise(async () => {
    const { untrusted } = asked
    say(linesOf(asked).join("\n"))
    const answer = await answerTo(untrusted === undefined ? COMMANDS_QUESTION : TRUST_QUESTION)
    if (answer === undefined) return undefined
    if (!/^y(es)?$/i.test(answer.trim())) {
      if (untrusted !== undefined) say(`mm: ${ignoredLine(untrusted.shown, untrusted.settings)}`)
      return loaded
    }
    say(record(asked, cwd))
    return untrusted === undefined ? loaded : { ...loaded, config: untrusted.trusted, untrusted: undefined }
  })
