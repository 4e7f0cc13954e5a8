/**
 * The tool calls of a whole answer, checked the same way whatever the API: each has a name
 * and JSON arguments. When the output limit cut the answer, a call whose arguments it cut is
 * left out with its line if complete calls come before or beside it (they run, and the model
 * is told to write the cut one again); alone, it fails the answer.
 */
import { type GenerationError, rawText } from "../domain/Errors"
import type { ToolCall } from "../domain/Session"
import { squashed } from "../lib/OneLine"
import { CHUNK_SHOWN_MAX, fail } from "./Failures"

/** One call as the answer wrote it, in the order the answer gave them. */
export interface WrittenCall {
  /** Its number in the answer, named in a failure. */
  readonly index: number
  readonly id: string
  readonly name: string
  /** Its arguments as streamed; empty stands for `{}`. */
  readonly arguments: string
}

/** A call the output limit cut: left out, with the line said of it. */
export interface CutCall {
  readonly name: string
  readonly line: string
}

export interface AnswerCalls {
  readonly toolCalls: ReadonlyArray<ToolCall>
  readonly cutCalls: ReadonlyArray<CutCall>
}

/**
 * The calls checked. `cutByLimit`: the answer ended at the output limit; `cutLine` words a
 * call it cut.
 */
export const answerCalls = (
  written: ReadonlyArray<WrittenCall>,
  cutByLimit: boolean,
  cutLine: (tool: string) => string
): AnswerCalls | GenerationError => {
  const toolCalls: Array<ToolCall> = []
  const cutCalls: Array<CutCall> = []
  let cut: GenerationError | undefined
  for (const call of written) {
    if (call.name === "") {
      return fail("malformed", `the model sent tool call #${call.index} without a name`, JSON.stringify(call))
    }
    const args = call.arguments.trim() === "" ? "{}" : call.arguments
    try {
      JSON.parse(args)
    } catch (cause) {
      if (!cutByLimit) {
        return fail(
          "malformed",
          `the model gave tool "${squashed(call.name, 40)}" arguments that are not JSON: ${
            squashed(args, CHUNK_SHOWN_MAX)
          }`,
          `${rawText(cause)} in arguments of ${call.name}: ${args}`
        )
      }
      const line = cutLine(squashed(call.name, 40))
      cut ??= fail(
        "output-limit",
        line,
        `${rawText(cause)} in arguments of ${call.name} (cut by the output limit): ${args}`
      )
      cutCalls.push({ name: call.name, line })
      continue
    }
    toolCalls.push({ id: call.id, type: "function", function: { name: call.name, arguments: args } })
  }
  // nothing to run: the answer is the cut call, and fails
  if (cut !== undefined && toolCalls.length === 0) return cut
  return { toolCalls, cutCalls }
}
