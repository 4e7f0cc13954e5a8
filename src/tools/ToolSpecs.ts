import type { ToolSpec } from "../model/ModelClient"
import { DEFAULT_BASH_TIMEOUT_SECONDS, DEFAULT_READ_LIMIT, GLOB_MAX_PATHS, GREP_MAX_MATCHES } from "./Tool"

/**
 * What the model is told of the built-in tools (sent with every request). Decoding the
 * arguments of a call is `ToolArguments.ts`, loaded only with the code that runs calls.
 */
export const toolSpecs: ReadonlyArray<ToolSpec> = [
  {
    name: "bash",
    description:
      "Run a shell command with `bash -c` in the project directory. stdin is closed, so nothing can prompt. " +
      "The result starts with a status line (`exit code N`, or `killed after N s (timeout)`) followed by stdout and stderr interleaved. " +
      "Long output keeps its beginning and its end. The command and everything it started are killed on timeout. " +
      "To leave a process running in the background, redirect its output: `cmd > log 2>&1 &`.",
    parameters: {
      type: "object",
      properties: {
        command: { type: "string", description: "the command line, run by bash -c" },
        timeout: {
          type: "number",
          description: `seconds before the command is killed (default ${DEFAULT_BASH_TIMEOUT_SECONDS})`
        }
      },
      required: ["command"]
    }
  },
  {
    name: "read_file",
    description:
      "Read a text file, relative to the project directory (absolute paths work too). Returns the lines as they are, without line numbers. " +
      `At most ${DEFAULT_READ_LIMIT} lines (and what fits in the output limit) come back at once; ` +
      "a partial read ends with a line in brackets saying which lines were shown and the offset to read on from.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "file path, relative to the project directory or absolute" },
        offset: { type: "integer", minimum: 1, description: "1-based number of the first line to read (default 1)" },
        limit: {
          type: "integer",
          minimum: 1,
          description: `how many lines to read at most (default ${DEFAULT_READ_LIMIT})`
        }
      },
      required: ["path"]
    }
  },
  {
    name: "write_file",
    description: "Create a file or overwrite it whole with the given content, creating missing parent directories. " +
      "To change part of an existing file, prefer edit_file.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "file path, relative to the project directory or absolute" },
        content: { type: "string", description: "the complete new content of the file" }
      },
      required: ["path", "content"]
    }
  },
  {
    name: "edit_file",
    description:
      "Replace one exact piece of text in a file. `old` must occur exactly once in the file, whitespace and indentation included; " +
      "if it occurs several times, include more surrounding lines to make it unique.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "file path, relative to the project directory or absolute" },
        old: { type: "string", description: "the exact text to replace; must occur exactly once" },
        new: { type: "string", description: "the text to put in its place" }
      },
      required: ["path", "old", "new"]
    }
  },
  {
    name: "grep",
    description:
      "Search file contents for a regular expression (JavaScript syntax); .gitignored and binary files are skipped. " +
      `Returns up to ${GREP_MAX_MATCHES} matching lines as \`path:line: text\`.`,
    parameters: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "regular expression" },
        path: { type: "string", description: "folder or file to search (default: the project)" },
        glob: { type: "string", description: "only files matching this, e.g. *.ts or src/**/*.tsx" },
        ignore_case: { type: "boolean" }
      },
      required: ["pattern"]
    }
  },
  {
    name: "glob",
    description: "Find files by path pattern; .gitignored files are skipped. `*.ts` matches at any depth, " +
      `\`src/**/*.ts\` from the folder searched. Returns up to ${GLOB_MAX_PATHS} paths, newest first.`,
    parameters: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "glob pattern" },
        path: { type: "string", description: "folder to search (default: the project)" }
      },
      required: ["pattern"]
    }
  }
]
