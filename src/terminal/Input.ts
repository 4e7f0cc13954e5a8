import { nodeReadline } from "../lib/NodeModules"

/**
 * The keyboard side of the terminal: questions, one-key answers, and Ctrl-C while a turn
 * runs. On a TTY it is mm's line editor (LineEditor.ts); piped stdin is read line by line.
 */
export interface TerminalInput {
  readonly interactive: boolean
  /**
   * The next line, or undefined when the user leaves (Ctrl-D, Ctrl-C on an empty line, end of
   * input); `ESC_ESC` when Esc was pressed twice at an empty prompt. On a terminal the line
   * starts as `draft`, for editing.
   */
  readonly question: (prompt: string, draft?: string) => Promise<string | undefined>
  /** On a terminal: one of `items` chosen with the arrow keys and Enter (its index); undefined when given up or piped. */
  readonly choose: (title: string, items: ReadonlyArray<string>, at: number) => Promise<number | undefined>
  /**
   * One key among `keys` (lowercase); `CANCELLED` on Ctrl-C; undefined on Ctrl-D or end of
   * input. Other keys, Enter included, answer nothing and are ignored. What is typed in the
   * same burst after the answering key (the `es⏎` of `yes⏎`) is dropped — never past the next
   * prompt drawn, where typing is always a new line — unless the answer is
   * one of `options.thenLine`: then the typing goes on into the next line read.
   */
  readonly key: (
    prompt: string,
    keys: ReadonlyArray<string>,
    options?: { readonly thenLine?: ReadonlyArray<string> }
  ) => Promise<string | undefined>
  /** Calls `onCancel` on Ctrl-C (and Esc on a terminal) until the returned function is called. */
  readonly watchCancel: (onCancel: () => void) => () => void
  /** On a terminal: where history is kept (a file, or memory), and what Tab completes. */
  readonly configure: (options: {
    readonly historyFile?: string
    readonly history?: "memory"
    readonly complete?: Completer
    /** Shift-Tab at the prompt: moves to the next permission mode, returns the line that names it. */
    readonly nextMode?: () => string
    /** What `/` typed on an empty line shows: the slash commands, one a line, with what each does. */
    readonly commandMenu?: string
  }) => void
  readonly close: () => void
  /** On a terminal: the next prompt starts with `text` typed (an interrupted question, given back). */
  readonly offer?: (text: string) => void
}

/** What Tab offers for the text before the cursor: replacements of the text from `start` on. */
export type Completer = (
  before: string
) => Promise<{ readonly start: number; readonly items: ReadonlyArray<string> } | undefined>

/** What `question` answers for Esc Esc at an empty prompt: the list of earlier questions is asked for. */
export const ESC_ESC = "\u001b\u001b"

/** What `key` answers when Ctrl-C was pressed instead: the turn is being cancelled. */
export const CANCELLED = "\u0003"

/** Lines as they come, kept until asked for: a paste or a line typed ahead is never lost. */
const makeLineQueue = () => {
  const lines: Array<string> = []
  let waiter: ((line: string | undefined) => void) | undefined
  let ended = false
  return {
    push: (line: string) => {
      if (waiter === undefined) return void lines.push(line)
      const take = waiter
      waiter = undefined
      take(line)
    },
    end: () => {
      ended = true
      const take = waiter
      waiter = undefined
      take?.(undefined)
    },
    get ended() {
      return ended
    },
    has: () => lines.length > 0,
    /** The next line; `abandon` gives up waiting without taking a later line. */
    next: (): { readonly line: Promise<string | undefined>; readonly abandon: () => void } => {
      if (lines.length > 0) return { line: Promise.resolve(lines.shift()), abandon: () => undefined }
      if (ended) return { line: Promise.resolve(undefined), abandon: () => undefined }
      let resolveLine!: (line: string | undefined) => void
      const line = new Promise<string | undefined>((resolve) => (resolveLine = resolve))
      waiter = resolveLine
      return {
        line,
        abandon: () => {
          if (waiter === resolveLine) waiter = undefined
          resolveLine(undefined)
        }
      }
    }
  }
}

/** Ctrl-C handlers registered while a turn runs; the newest decides. */
const makeCancelHandlers = () => {
  const handlers = new Set<() => void>()
  return {
    watch: (onCancel: () => void) => {
      handlers.add(onCancel)
      return () => void handlers.delete(onCancel)
    },
    /** True when someone was listening. */
    fire: () => {
      if (handlers.size === 0) return false
      for (const handler of [...handlers]) handler()
      return true
    }
  }
}

/**
 * Piped stdin: one question per line; Ctrl-C (SIGINT) cancels a running turn. `interactive`: a
 * terminal that takes no escape sequence (`TERM=dumb`): the terminal edits the line itself, mm
 * writes the prompt and asks its questions.
 */
export const makePipedInput = (
  stdin: NodeJS.ReadableStream,
  stdout: NodeJS.WritableStream,
  options: { readonly interactive?: boolean } = {}
): TerminalInput => {
  const queue = makeLineQueue()
  const cancel = makeCancelHandlers()
  const rl = nodeReadline().createInterface({ input: stdin, terminal: false, crlfDelay: Infinity })
  rl.on("line", (line) => queue.push(line))
  rl.on("close", () => queue.end())

  const interactive = options.interactive === true
  let abandonKey: (() => void) | undefined
  let interrupted = false
  const key = async (prompt: string, keys: ReadonlyArray<string>) => {
    stdout.write(prompt)
    const next = queue.next()
    interrupted = false
    abandonKey = next.abandon
    const line = await next.line
    abandonKey = undefined
    if (interrupted) {
      stdout.write("\n")
      return CANCELLED
    }
    const answer = line?.trim().toLowerCase().slice(0, 1)
    // on a terminal the line typed is on the screen already (the terminal echoed it)
    if (!interactive) stdout.write(`${answer ?? ""}\n`)
    return answer !== undefined && keys.includes(answer) ? answer : undefined
  }

  const watchCancel = (onCancel: () => void) => {
    const stop = cancel.watch(onCancel)
    const onSignal = () => {
      if (abandonKey !== undefined) {
        interrupted = true
        abandonKey()
      }
      cancel.fire()
    }
    process.on("SIGINT", onSignal)
    return () => {
      stop()
      process.off("SIGINT", onSignal)
    }
  }

  return {
    interactive,
    question: (prompt) => {
      if (interactive) stdout.write(prompt)
      return queue.next().line
    },
    choose: () => Promise.resolve(undefined),
    key,
    watchCancel,
    configure: () => undefined,
    close: () => rl.close()
  }
}
