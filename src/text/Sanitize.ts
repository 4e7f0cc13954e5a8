/**
 * Text that came from outside mm (the model, a tool, a session file, a server's error) is
 * printed only through `sanitize`: no escape sequence in it can set the window title, move
 * the cursor, clear the screen or change colours. See docs/explanation/guarantees.md.
 */

/** Whole escape sequences: CSI (`ESC [` … final byte), OSC/DCS/APC/PM/SOS (… BEL or ESC \), and two-byte escapes. */
const sequences =
  /\u001b\[[0-?]*[ -/]*[@-~]|\u009b[0-?]*[ -/]*[@-~]|(?:\u001b[\]PX^_]|[\u0090\u0098\u009d\u009e\u009f])[^\u0007\u001b\u009c\n]*(?:\u0007|\u001b\\|\u009c)?|\u001b[ -/]*[0-~]?/g

/** Any control character left: C0 but newline and tab, DEL, C1. */

const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/** `text` without escape sequences and control characters other than `\n` and `\t`. */
export const sanitize = (text: string): string => {
  // the common case, plain text, costs one scan

  if (!/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(text)) return text
  return text.replace(sequences, "").replace(controls, "")
}
