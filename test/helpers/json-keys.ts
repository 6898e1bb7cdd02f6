/**
 * Repeated keys in JSON text. `JSON.parse` keeps the last of two equal keys of an object without
 * a word, so a log line written as `{"command":"chat","command":"chat"}` parses as if it were
 * right; this scanner reads the text itself.
 */

/**
 * The keys that occur more than once in one object of a JSON text (any depth), each as
 * `path.key` (`key` at the top level), in order of their second occurrence.
 * @param text one JSON value (a log line); it is scanned, not validated.
 */
export function repeatedKeys(text: string): string[] {
  const repeated: string[] = [];
  // One entry per open object ({ keys, path }) or array (undefined keys).
  const open: Array<{ keys: Set<string> | undefined; path: string }> = [];
  let lastKey = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      let next = end + 1;
      while (text[next] === ' ' || text[next] === '\n' || text[next] === '\t' || text[next] === '\r') next++;
      const top = open.at(-1);
      if (top?.keys && text[next] === ':') {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) repeated.push(top.path ? `${top.path}.${key}` : key);
        top.keys.add(key);
        lastKey = key;
      }
      i = end;
    } else if (c === '{' || c === '[') {
      const parent = open.at(-1);
      const path =
        parent === undefined
          ? ''
          : parent.keys
            ? parent.path
              ? `${parent.path}.${lastKey}`
              : lastKey
            : `${parent.path}[]`;
      open.push({ keys: c === '{' ? new Set() : undefined, path });
    } else if (c === '}' || c === ']') {
      open.pop();
    }
  }
  return repeated;
}
