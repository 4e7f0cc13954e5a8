import * as readline from "node:readline"

/**
 * The keyboard side of the terminal: questions line by line, one-key answers, and Ctrl-C
 * while a turn runs. Works on a TTY (line editing, raw keys) and on piped stdin (lines).
 */
export interface TerminalInput {
  readonly interactive: boolean
  /** The next line, or undefined when the user leaves (Ctrl-D, Ctrl-C on an empty line, end of input). */
  readonly question: (prompt: string) => Promise<string | undefined>
  /** One key among `keys` (lowercase); undefined on Ctrl-C, Ctrl-D or end of input. */
  readonly key: (prompt: string, keys: ReadonlyArray<string>) => Promise<string | undefined>
  /** Calls `onCancel` on Ctrl-C until the returned function is called. */
  readonly watchCancel: (onCancel: () => void) => () => void
  readonly close: () => void
}

const ETX = 0x03
const EOT = 0x04

export const makeTtyInput = (stdin: NodeJS.ReadStream, stdout: NodeJS.WriteStream): TerminalInput => {
  const history: Array<string> = []

  const question = (prompt: string) =>
    new Promise<string | undefined>((resolve) => {
      const rl = readline.createInterface({ input: stdin, output: stdout, terminal: true, history: [...history], historySize: 500 })
      let done = false
      const finish = (value: string | undefined) => {
        if (done) return
        done = true
        rl.close()
        resolve(value)
      }
      rl.on("SIGINT", () => {
        if (rl.line === "") {
          stdout.write("\n")
          finish(undefined)
        } else {
          stdout.write("^C\n")
          rl.write(null, { ctrl: true, name: "u" })
          rl.prompt()
        }
      })
      rl.on("close", () => finish(undefined))
      rl.on("line", (line) => {
        if (line.trim() !== "") history.unshift(line)
        finish(line)
      })
      rl.setPrompt(prompt)
      rl.prompt()
    })

  let rawUsers = 0
  const rawOnce = (onData: (data: Buffer) => boolean) => {
    if (rawUsers++ === 0) {
      stdin.setRawMode(true)
      stdin.resume()
    }
    let active = true
    const listener = (data: Buffer) => {
      if (onData(data)) stop()
    }
    const stop = () => {
      if (!active) return
      active = false
      stdin.off("data", listener)
      if (--rawUsers === 0) {
        stdin.setRawMode(false)
        stdin.pause()
      }
    }
    stdin.on("data", listener)
    return stop
  }

  const key = (prompt: string, keys: ReadonlyArray<string>) =>
    new Promise<string | undefined>((resolve) => {
      stdout.write(prompt)
      rawOnce((data) => {
        const byte = data[0]
        if (byte === ETX || byte === EOT) {
          stdout.write("\n")
          resolve(undefined)
          return true
        }
        const pressed = data.toString("utf8").toLowerCase()
        if (!keys.includes(pressed)) return false
        stdout.write(`${pressed}\n`)
        resolve(pressed)
        return true
      })
    })

  const watchCancel = (onCancel: () => void) =>
    rawOnce((data) => {
      if (data.includes(ETX)) {
        onCancel()
        return true
      }
      return false
    })

  return { interactive: true, question, key, watchCancel, close: () => stdin.pause() }
}

export const makePipedInput = (stdin: NodeJS.ReadableStream, stdout: NodeJS.WritableStream): TerminalInput => {
  const lines: Array<string> = []
  const waiting: Array<(line: string | undefined) => void> = []
  let ended = false
  const rl = readline.createInterface({ input: stdin, terminal: false, crlfDelay: Infinity })
  rl.on("line", (line) => {
    const next = waiting.shift()
    if (next !== undefined) next(line)
    else lines.push(line)
  })
  rl.on("close", () => {
    ended = true
    for (const next of waiting.splice(0)) next(undefined)
  })
  const nextLine = () =>
    new Promise<string | undefined>((resolve) => {
      if (lines.length > 0) resolve(lines.shift())
      else if (ended) resolve(undefined)
      else waiting.push(resolve)
    })

  const key = async (prompt: string, keys: ReadonlyArray<string>) => {
    stdout.write(prompt)
    const line = await nextLine()
    const answer = line?.trim().toLowerCase().slice(0, 1)
    stdout.write(`${answer ?? ""}\n`)
    return answer !== undefined && keys.includes(answer) ? answer : undefined
  }

  const watchCancel = (onCancel: () => void) => {
    const listener = () => onCancel()
    process.on("SIGINT", listener)
    return () => {
      process.off("SIGINT", listener)
    }
  }

  return { interactive: false, question: () => nextLine(), key, watchCancel, close: () => rl.close() }
}
