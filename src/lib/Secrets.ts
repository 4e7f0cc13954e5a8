/**
 * The secrets mm knows (the model server's key, values taken from the environment for
 * headers or MCP servers): kept out of anything shown, saved or sent to an editor, and out
 * of the environment the tools run in. See docs/explanation/guarantees.md.
 *
 * One registry serves the whole program (Main.ts makes it and provides it as the `Secrets`
 * service); the layers that learn a secret register it there, and every place where text
 * leaves mm redacts through it. A test makes a registry of its own.
 */
import * as Context from "effect/Context"

const REDACTED = "[redacted]"

/** Shorter values are too likely to occur by chance to be replaced everywhere. */
const MIN_SECRET_LENGTH = 4

/** Redaction of text that arrives in pieces (a streamed answer). */
export interface StreamRedactor {
  readonly push: (text: string) => string
  readonly flush: () => string
}

/** Every form a secret may take in text: as is, and as it appears inside a JSON string; longest first. */
const formsOf = (secrets: ReadonlySet<string>): Array<string> => {
  const all = new Set<string>()
  for (const secret of secrets) {
    all.add(secret)
    const quoted = JSON.stringify(secret).slice(1, -1)
    if (quoted !== secret) all.add(quoted)
  }
  // longest first, so a secret that contains another is replaced whole
  return [...all].sort((a, b) => b.length - a.length)
}

/** How much of the end of `text` could be the start of a secret, and must wait for the next piece. */
const heldBackOf = (forms: ReadonlyArray<string>, text: string): number => {
  let keep = 0
  for (const form of forms) {
    for (let n = Math.min(form.length - 1, text.length); n > keep; n--) {
      if (text.endsWith(form.slice(0, n))) {
        keep = n
        break
      }
    }
  }
  return keep
}

/** The secrets known so far, and what is done with them. */
export class SecretRegistry {
  private readonly secrets = new Set<string>()
  private readonly variables = new Set<string>()
  private forms: Array<string> = []

  /** From now on `value` is replaced by `[redacted]` wherever `redact` runs. Values under 4 characters are ignored. */
  register(value: string): void {
    const secret = value.trim()
    if (secret.length < MIN_SECRET_LENGTH || this.secrets.has(secret)) return
    this.secrets.add(secret)
    this.forms = formsOf(this.secrets)
  }

  /**
   * A URL's user part (`http://user:KEY@host/v1`) is a credential: the whole user part and
   * its password (or a user name alone, `https://TOKEN@host`) are registered, as written and
   * percent-decoded.
   */
  registerUrl(url: string): void {
    const userinfo = /^[a-z][a-z0-9+.-]*:\/\/([^/?#\s]*)@/i.exec(url.trim())?.[1]
    if (userinfo === undefined) return
    const colon = userinfo.indexOf(":")
    for (const form of [userinfo, colon === -1 ? userinfo : userinfo.slice(colon + 1)]) {
      this.register(form)
      try {
        this.register(decodeURIComponent(form))
      } catch {
        // not valid percent-encoding: registered as written only
      }
    }
  }

  /** The environment variable `name` holds a secret: its value is registered, and the variable is left out of `toolEnv()`. */
  registerVariable(name: string, env: NodeJS.ProcessEnv = process.env): void {
    this.variables.add(name)
    const value = env[name]
    if (value !== undefined) this.register(value)
  }

  /**
   * A configuration value in which `${NAME}` stands for the environment variable NAME: the
   * value with each reference replaced, each value so read registered as a secret, and the
   * names that are not set (they become empty).
   */
  resolveRefs(
    text: string,
    env: NodeJS.ProcessEnv = process.env
  ): { readonly value: string; readonly missing: ReadonlyArray<string> } {
    const missing: Array<string> = []
    const value = text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
      const found = env[name]
      if (found === undefined) {
        missing.push(name)
        return ""
      }
      this.registerVariable(name, env)
      return found
    })
    return { value, missing }
  }

  /** `text` with every registered secret replaced by `[redacted]`. */
  readonly redact = (text: string): string => {
    if (this.forms.length === 0 || text.length < MIN_SECRET_LENGTH) return text
    let out = text
    for (const form of this.forms) {
      if (out.includes(form)) out = out.split(form).join(REDACTED)
    }
    return out
  }

  /** A piece that ends with the beginning of a secret keeps that end back until the next piece shows whether it is one. */
  streamRedactor(): StreamRedactor {
    let held = ""
    return {
      push: (text) => {
        if (this.forms.length === 0) return text
        const all = this.redact(held + text)
        const keep = heldBackOf(this.forms, all)
        held = all.slice(all.length - keep)
        return all.slice(0, all.length - keep)
      },
      flush: () => {
        const rest = this.redact(held)
        held = ""
        return rest
      }
    }
  }

  /** Whether any secret is registered at all. */
  known(): boolean {
    return this.forms.length > 0
  }

  /** Whether any registered secret occurs in `text`. */
  holds(text: string): boolean {
    return this.forms.some((form) => text.includes(form))
  }

  /** The names of the environment variables that hold secrets (a sandbox unsets them). */
  variableNames(): ReadonlyArray<string> {
    return [...this.variables]
  }

  /** The environment for tools: mm's own, without the variables that hold secrets. */
  toolEnv(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {}
    for (const [name, value] of Object.entries(process.env)) {
      if (this.variables.has(name)) continue
      if (value !== undefined && value.trim().length >= MIN_SECRET_LENGTH && this.secrets.has(value.trim())) continue
      env[name] = value
    }
    return env
  }
}

/** The program's registry of secrets. */
export class Secrets extends Context.Tag("mm/Secrets")<Secrets, SecretRegistry>() {}
