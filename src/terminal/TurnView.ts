import * as Effect from "effect/Effect"
import * as Match from "effect/Match"

import { cancelledResult } from "../agent/Turn"
import type { TurnEvent } from "../agent/TurnEvent"
import type { PlanEntry } from "../domain/Plan"
import { type SubAgentSpend, toolResultLine, toolStartLine, usageLine } from "../text/Lines"
import { planChecklist } from "../text/PlanText"
import { sanitize, sanitizeOutput, sanitizeProse } from "../text/Sanitize"
import type { Style } from "../text/Style"
import type { TerminalMemory } from "./Commands"
import type { Answers } from "./Markdown"
import type { Progress } from "./Progress"
import type { Printer } from "./TerminalIO"
import { makeThoughtDisplay, type ThoughtDisplay } from "./Thought"

/** What a turn's events are drawn with. */
interface TurnViewParts {
  /** Answers: stdout. */
  readonly print: Printer
  /** Tool lines, notices and red lines. */
  readonly info: Printer
  readonly style: Style
  /** On a terminal (the reasoning streams live). */
  readonly live: boolean
  readonly answers: Answers
  readonly progress: Progress
  /** `/last` finds the last tool call's output here. */
  readonly memory: TerminalMemory
  /** What the progress line says while the model is awaited (`waiting for MODEL`; the REPL sets it for each turn). */
  readonly waiting: WaitingLabel
  /** Taken for each event drawn: an approval question holds it while it waits (TerminalIO.ts). */
  readonly questions: Effect.Semaphore
}

/** What the progress line says while the model is awaited: `waiting for MODEL`. */
export interface WaitingLabel {
  readonly text: string
  /** The label for a turn that asks `model` (the conversation's choice; undefined: agent.yaml's), and keeps it. */
  readonly asking: (model: string | undefined) => string
}

export const waitingLabel = (configured: string): WaitingLabel => {
  const label = {
    text: `waiting for ${configured}`,
    asking: (model: string | undefined) => (label.text = `waiting for ${model ?? configured}`)
  }
  return label
}

/** A turn's events drawn on the terminal, and what the terminal learns from them. */
export interface TurnView {
  /** Draws one event of a turn. */
  readonly render: (event: TurnEvent) => Effect.Effect<void>
  /** A turn starts: it has not failed yet. */
  readonly begin: () => void
  /** A turn is over (finished, failed or cancelled): its usage is forgotten. */
  readonly end: () => void
  /** The turn was cancelled: the reasoning collapses, a table cut short says so. */
  readonly cancelled: () => void
  /** Whether the last turn failed: piped, mm then ends with exit code 1. */
  readonly failed: () => boolean
}

/** How much of a running call's output is kept for `/last`, should it be cancelled. */
const KEPT_OUTPUT = 64 * 1024

type Usage = Extract<TurnEvent, { _tag: "Usage" }>

/** The parts, with what drawing keeps between events. */
interface Drawing extends TurnViewParts {
  readonly thoughts: ThoughtDisplay
  /** The titles of the calls started, by call id, for `/last`. */
  readonly titles: Map<string, string>
  /** What the calls not finished yet printed so far, by call id: `/last` shows it after a cancel. */
  readonly running: Map<string, { readonly name: string; output: string }>
  usage: Usage | undefined
  /** Whether calls run side by side now (sub-agents): a result line is then preceded by its call's. */
  sideBySide: boolean
  /** What this turn's sub-agents spent, all told (shown apart from the window's usage). */
  subAgents: SubAgentSpend | undefined
  /** The plan as this turn last wrote it (undefined: the turn has not written one): printed once, at its end. */
  plan: ReadonlyArray<PlanEntry> | undefined
  /** The calls that wrote the plan: their result line is not printed (the checklist says it). */
  readonly planCalls: Set<string>
  failed: boolean
}

export const makeTurnView = (parts: TurnViewParts): TurnView => {
  const drawing: Drawing = {
    ...parts,
    thoughts: makeThoughtDisplay({
      print: parts.info,
      style: parts.style,
      live: parts.live,
      columns: () => process.stdout.columns || 80,
      rows: () => process.stdout.rows || 24
    }),
    titles: new Map(),
    running: new Map(),
    usage: undefined,
    subAgents: undefined,
    sideBySide: false,
    plan: undefined,
    planCalls: new Set(),
    failed: false
  }
  const draw = (event: TurnEvent) => Effect.sync(() => drawEvent(drawing, event))
  return {
    // the first words of an answer wait for the markdown engine while it loads
    render: (event) =>
      parts.questions.withPermits(1)(
        event._tag === "TextDelta" && !parts.answers.settled()
          ? Effect.zipRight(parts.answers.engine, draw(event))
          : draw(event)
      ),
    begin: () => {
      drawing.failed = false
    },
    end: () => {
      drawing.usage = undefined
      drawing.subAgents = undefined
      drawing.plan = undefined
      drawing.planCalls.clear()
      parts.progress.plan(undefined)
      // a call still running was cancelled: /last shows what it printed, as the model gets it
      for (const [id, call] of drawing.running) {
        drawing.memory.lastTool = {
          name: call.name,
          title: sanitize(drawing.titles.get(id) ?? ""),
          output: sanitizeOutput(cancelledResult(call.output, Number.MAX_SAFE_INTEGER))
        }
      }
      drawing.running.clear()
      drawing.sideBySide = false
    },
    failed: () => drawing.failed,
    cancelled: () => {
      drawing.thoughts.close()
      parts.answers.cut()
      // a cancelled turn is kept, with the plan it wrote
      printPlan(settled(drawing))
    }
  }
}

/**
 * One event on the terminal, by its tag. `Match.valueTags` wants a case for every tag: an event
 * added to TurnEvent does not compile here until it is drawn, or a case says it is ignored.
 */
const drawEvent = (d: Drawing, event: TurnEvent): void =>
  Match.valueTags(event, {
    ToolOutput: (e) => {
      const call = d.running.get(e.id)
      if (call !== undefined) call.output = (call.output + e.text).slice(-KEPT_OUTPUT)
      d.progress.output(sanitizeOutput(e.text))
    },
    ReasoningDelta: (e) => {
      d.progress.stop()
      d.answers.flush()
      d.thoughts.push(sanitizeProse(e.text))
    },
    TextDelta: (e) => {
      d.progress.stop()
      d.thoughts.close()
      d.answers.write(sanitizeProse(e.text))
    },
    Usage: (e) => {
      d.usage = e
    },
    PromptProgress: (e) => d.progress.relabel(`${d.waiting.text} · ${promptProgressLine(e.processed, e.total)}`),
    ToolCallStarted: (e) => toolStarted(settled(d), e),
    ToolCallFinished: (e) => toolFinished(settled(d), e),
    Notice: (e) => noticed(settled(d), e),
    CompactionFailed: (e) => red(settled(d), e.error.message),
    TurnFailed: (e) => {
      // the session's plan went back to what it was before the question (agent/Turn.ts)
      d.plan = undefined
      settled(d).failed = true
      d.print.endLine()
      red(d, e.error.message)
    },
    Plan: (e) => planned(d, e.entries),
    SubAgentUsage: (e) => {
      d.subAgents = {
        promptTokens: (d.subAgents?.promptTokens ?? 0) + e.promptTokens,
        completionTokens: (d.subAgents?.completionTokens ?? 0) + e.completionTokens,
        estimated: d.subAgents?.estimated === true || e.estimated
      }
    },
    TurnFinished: () => finished(settled(d))
  })

/** `reading the prompt 2,048/4,858`: how far the server has read it. */
export const promptProgressLine = (processed: number, total: number): string =>
  `reading the prompt ${processed.toLocaleString("en-US")}/${total.toLocaleString("en-US")}`

/** Before any other line: the progress line gone, the answer held back drawn, the reasoning closed. */
const settled = (d: Drawing): Drawing => {
  d.progress.stop()
  d.answers.flush()
  d.thoughts.close()
  return d
}

const red = (d: Drawing, line: string) => d.info.line(d.style.red(sanitize(line)))

const toolStarted = (d: Drawing, event: Extract<TurnEvent, { _tag: "ToolCallStarted" }>) => {
  // calls side by side (sub-agents): each result then says which call it ends
  if (d.running.size > 0) d.sideBySide = true
  d.titles.set(event.id, event.title)
  d.running.set(event.id, { name: event.name, output: "" })
  d.print.endLine()
  d.info.line(toolStartLine(sanitize(event.name), sanitize(event.title), d.style))
  d.progress.start(`running ${sanitize(event.name)}`)
}

const toolFinished = (d: Drawing, event: Extract<TurnEvent, { _tag: "ToolCallFinished" }>) => {
  d.running.delete(event.id)
  if (d.sideBySide) {
    d.info.line(toolStartLine(sanitize(event.name), sanitize(d.titles.get(event.id) ?? event.name), d.style))
    if (d.running.size === 0) d.sideBySide = false
  }
  const wrotePlan = d.planCalls.delete(event.id)
  d.memory.lastTool = {
    name: event.name,
    title: sanitize(d.titles.get(event.id) ?? ""),
    output: sanitizeOutput(event.output)
  }
  if (!wrotePlan || event.failed) d.info.line(toolResultLine(sanitizeOutput(event.output), event.failed, d.style))
  // the model is asked again with the result
  d.progress.start(d.waiting.text)
}

const noticed = (d: Drawing, event: Extract<TurnEvent, { _tag: "Notice" }>) => {
  if (event.quiet !== true) return d.info.line(d.style.yellow(sanitize(event.text)))
  // a retry's wait: the model is still being waited for
  d.info.line(d.style.dim(sanitize(event.text)))
  d.progress.start(d.waiting.text)
}

/**
 * The model wrote its plan: the checklist is drawn above the status line, in place, and the
 * call that wrote it (the last one started) shows no result line of its own.
 */
const planned = (d: Drawing, entries: ReadonlyArray<PlanEntry>) => {
  d.plan = entries
  const writer = [...d.running.keys()].at(-1)
  if (writer !== undefined) d.planCalls.add(writer)
  d.progress.plan(livePlan(d.style, entries))
}

/** How many lines of the plan the status line carries above it at most. */
const LIVE_PLAN_LINES = 10

/** The plan's lines drawn live: all of them, or, for a longer plan, those from just before its first open step. */
export const livePlan = (style: Style, entries: ReadonlyArray<PlanEntry>): ReadonlyArray<string> => {
  const lines = planChecklist(entries, style)
  if (lines.length <= LIVE_PLAN_LINES) return lines
  const first = entries.findIndex((entry) => entry.status !== "completed")
  // every step done: the last ones
  const open = first === -1 ? entries.length - 1 : first
  const from = Math.min(Math.max(0, open - 2), lines.length - (LIVE_PLAN_LINES - 2))
  const to = from + LIVE_PLAN_LINES - 2
  return [
    ...(from > 0 ? [style.dim(`  … ${from} before`)] : []),
    ...lines.slice(from, to),
    ...(to < lines.length ? [style.dim(`  … ${lines.length - to} more`)] : [])
  ]
}

/** The plan this turn wrote, printed once for good (it was drawn live until now). */
const printPlan = (d: Drawing) => {
  if (d.plan === undefined) return
  for (const line of planChecklist(d.plan, d.style)) d.info.line(line)
  d.plan = undefined
}

const finished = (d: Drawing) => {
  d.print.endLine()
  printPlan(d)
  if (d.usage !== undefined) d.info.line(d.style.dim(usageLine(d.usage, d.subAgents)))
  d.usage = undefined
  d.subAgents = undefined
}
