/**
 * The terminal's question about a project's configuration (SPEC §14, project trust): what its
 * guarded settings would do, then `trust this configuration? [y/N]`. Asked before anything
 * starts (MCP servers, the model, the terminal's own input), on stderr, read as one line. `y`
 * records the trust (config/TrustStore.ts) and applies them; any other answer runs without
 * them, with the line that says what was left out. Loaded only when there is something to ask.
 */
import * as Effect from "effect/Effect"

import type { LoadedConfig } from "../config/Config"
import { ignoredLine, questionLines, type UntrustedSettings } from "../config/ProjectTrust"
import { recordTrust } from "../config/TrustStore"
import { nodeReadline } from "../lib/NodeModules"

export const TRUST_QUESTION = "trust this configuration? [y/N] "

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

/** Asks whether to trust the project's guarded settings; the configuration to run with, or undefined when Ctrl-C ends mm. */
export const askTrust = (
  loaded: LoadedConfig,
  untrusted: UntrustedSettings,
  cwd: string
): Effect.Effect<LoadedConfig | undefined> =>
  Effect.promise(async () => {
    say(questionLines(untrusted.shown, untrusted.settings).join("\n"))
    const answer = await answerTo(TRUST_QUESTION)
    if (answer === undefined) return undefined
    if (!/^y(es)?$/i.test(answer.trim())) {
      say(`mm: ${ignoredLine(untrusted.shown, untrusted.settings)}`)
      return loaded
    }
    try {
      const file = recordTrust(cwd, untrusted.file, untrusted.hash)
      say(`trusted: remembered in ${file} (delete it to be asked again)`)
    } catch (cause) {
      say(`mm: trusted for this run, but not remembered: ${cause instanceof Error ? cause.message : String(cause)}`)
    }
    return { ...loaded, config: untrusted.trusted, untrusted: undefined }
  })
