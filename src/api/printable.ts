/**
 * Text from the server or from manifests (names, owners, members) printed for people, on a terminal
 * or in a document: control characters (C0 but newline and tab, DEL, C1) become `\uXXXX`, so an
 * escape sequence in a name cannot move the cursor, erase rows above it, retitle the window or
 * plant a hyperlink. JSON and CSV keep the data exact (their readers are programs).
 */

// eslint-disable-next-line no-control-regex
const control = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export function printable(text: string): string {
  return text.replace(control, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
