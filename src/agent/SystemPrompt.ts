// The system message of a turn, built anew for every turn (a resumed session takes the
// current one): the configured `system` (mm's own names the tools, from their registry), the
// project's instructions, the skills, and the environment, in that order, so that what
// changes most often comes last.
import * as os from "node:os"

import * as Effect from "effect/Effect"

import type { AgentConfig } from "../config/Config"
import { DEFAULT_SYSTEM, SUB_AGENT_SYSTEM } from "../config/DefaultSystem"
import type { GitConfine } from "../lib/Git"
import type { ToolRegistryShape } from "../tools/Registry"
import { environmentOf, environmentPrompt } from "./Environment"
import { type InstructionFile, instructionsPrompt, loadInstructions } from "./Instructions"
import { loadSkills, type Skill, skillsPrompt } from "./Skills"

interface SystemPrompt {
  /** The whole system message. */
  readonly text: string
  /** Its parts, for `/context`: each one's text ("" when absent). */
  readonly parts: {
    readonly configured: string
    readonly instructions: string
    readonly skills: string
    readonly environment: string
  }
  readonly instructionFiles: ReadonlyArray<InstructionFile>
  readonly skills: ReadonlyArray<Skill>
  /** Skills and instruction files skipped, each a line to show once. */
  readonly warnings: ReadonlyArray<string>
}

/** The configured prompt as sent: mm's own (or its sub-agents') with the tools' sentence after its first line; anyone else's as written. */
export const configuredSystem = (system: string, toolSentence: string): string => {
  if ((system !== DEFAULT_SYSTEM && system !== SUB_AGENT_SYSTEM) || toolSentence === "") return system
  const [first, ...rest] = system.split("\n")
  return [first, toolSentence, ...rest].join("\n")
}

export const systemPromptOf = (
  config: AgentConfig,
  tools: Pick<ToolRegistryShape, "sentence">,
  cwd: string,
  git: Effect.Effect<GitConfine | undefined>
): Effect.Effect<SystemPrompt> =>
  Effect.gen(function*() {
    const home = os.homedir()
    const { skills, warnings: skillWarnings } = yield* loadSkills(config.skills.dirs, cwd, home)
    const instructions = loadInstructions(config.instructions, cwd, home)
    const parts = {
      configured: configuredSystem(config.system, tools.sentence),
      instructions: instructionsPrompt(instructions.files),
      skills: skillsPrompt(skills),
      environment: environmentPrompt(yield* environmentOf(cwd, git))
    }
    return {
      text: [parts.configured, parts.instructions, parts.skills, parts.environment]
        .filter((part) => part !== "")
        .join("\n\n"),
      parts,
      instructionFiles: instructions.files,
      skills,
      warnings: [...instructions.warnings, ...skillWarnings]
    }
  }).pipe(Effect.withSpan("SystemPrompt.of"))
