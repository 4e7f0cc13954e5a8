import * as readline from "node:readline"

/**
 * The keyboard side of the terminal: questions line by line, one-key answers, and Ctrl-C
 * while a turn runs. Works on a TTY (line editing, history, type-ahead) and on piped stdin.
 */
export interface TerminalInput {
  readonly interactive: boolean
  /** The next line, or undefined when the user leaves (Ctrl-D, Ctrl-C on an empty line, end of input). */
  readonly question: (prompt: string) => Promise<string | undefined>
  /** One key among `keys` (lowercase); `CANCELLED` on Ctrl-C; undefined on Ctrl-D or end of input. */
  readonly key: (prompt: string, keys: ReadonlyArray<string>) => Promise<string | undefined>
  /** Calls `onCancel` on Ctrl-C until the returned function is called. */
  readonly watchCancel: (onCancel: () => void) => () => void
  readonly close: () => void
}

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
 * On a terminal one readline lives as long as mm: it keeps history, echoes what is typed
 * while an answer streams, and queues every line, so a paste of several lines is several
 * questions. Ctrl-C cancels the running turn, clears a line being typed, or, on an empty
 * prompt, leaves.
 */
export const makeTtyInput = (stdin: NodeJS.ReadStream, stdout: NodeJS.WriteStream): TerminalInput => {
  const queue = makeLineQueue()
  const cancel = makeCancelHandlers()
  const rl = readline.createInterface({ input: stdin, output: stdout, terminal: true, historySize: 500 })
  const state = rl as unknown as { line: string; cursor: number }
  let pendingKey: ((key: string | undefined) => void) | undefined

  const clearLine = () => {
    state.line = ""
    state.cursor = 0
  }

  rl.on("line", (line) => queue.push(line))
  rl.on("close", () => {
    pendingKey?.(undefined)
    queue.end()
  })
  rl.on("SIGINT", () => {
    if (pendingKey !== undefined) pendingKey(CANCELLED)
    if (cancel.fire()) return clearLine()
    if (rl.line === "") {
      stdout.write("\n")
      rl.close()
      return
    }
    stdout.write("^C\n")
    clearLine()
    rl.prompt()
  })

  const question = (prompt: string) => {
    if (queue.has() || queue.ended) return queue.next().line
    rl.setPrompt(prompt)
    rl.prompt(true)
    return queue.next().line
  }

  const key = (prompt: string, keys: ReadonlyArray<string>) =>
    new Promise<string | undefined>((resolve) => {
      stdout.write(prompt)
      const typedBefore = rl.line
      clearLine()
      const finish = (answer: string | undefined) => {
        stdin.off("keypress", onKey)
        pendingKey = undefined
        clearLine()
        if (typedBefore !== "") state.line = typedBefore
        stdout.write("\n")
        resolve(answer)
      }
      // readline has already echoed the key and put it in its line when this runs
      const onKey = (text: string | undefined, info: { ctrl?: boolean; name?: string } | undefined) => {
        if (info?.ctrl === true && info.name === "d") return finish(undefined)
        const pressed = (text ?? "").toLowerCase()
        if (keys.includes(pressed)) return finish(pressed)
        if (info?.ctrl === true) return
        clearLine()
        stdout.write(`\r\u001b[K${prompt}`)
      }
      pendingKey = finish
      stdin.on("keypress", onKey)
    })

  return {
    interactive: true,
    question,
    key,
    watchCancel: cancel.watch,
    close: () => rl.close()
  }
}

/** Piped stdin: one question per line; Ctrl-C (SIGINT) cancels a running turn. */
export const makePipedInput = (stdin: NodeJS.ReadableStream, stdout: NodeJS.WritableStream): TerminalInput => {
  const queue = makeLineQueue()
  const cancel = makeCancelHandlers()
  const rl = readline.createInterface({ input: stdin, terminal: false, crlfDelay: Infinity })
  rl.on("line", (line) => queue.push(line))
  rl.on("close", () => queue.end())

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
    stdout.write(`${answer ?? ""}\n`)
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

  return { interactive: false, question: () => queue.next().line, key, watchCancel, close: () => rl.close() }
}
