/**
 * A JSON reader that reports duplicate keys. `JSON.parse` keeps the last of two equal keys
 * without a word, so a log line that says `"level":30` and later `"level":"x"` looks fine
 * to it; log collectors then keep one or the other. This walks the text once and names
 * every key that occurs twice in the same object (as a path such as `$.err.type`).
 */
export interface StrictJsonResult {
  value: unknown;
  duplicates: string[];
}

export function parseStrictJson(text: string): StrictJsonResult {
  const duplicates: string[] = [];
  let i = 0;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at ${i}`);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const str = (): string => {
    const start = i;
    i++; // opening quote
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail('unterminated string');
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  // Iterative over an explicit stack: a deeply nested line must not overflow the reader.
  type Frame =
    | { kind: 'object'; value: Record<string, unknown>; keys: Set<string>; path: string; key?: string }
    | { kind: 'array'; value: unknown[]; path: string };
  const stack: Frame[] = [];
  let result: unknown;
  let done = false;
  const place = (v: unknown) => {
    const top = stack.at(-1);
    if (!top) {
      result = v;
      done = true;
    } else if (top.kind === 'array') top.value.push(v);
    else top.value[top.key!] = v;
  };
  const pathOf = (top: Frame | undefined): string =>
    !top ? '$' : top.kind === 'array' ? `${top.path}[${top.value.length}]` : `${top.path}.${top.key!}`;
  // After a value: `,` continues the container, a closer ends it.
  const afterValue = (): void => {
    for (;;) {
      ws();
      const top = stack.at(-1);
      if (!top) return;
      const c = text[i];
      if (c === ',') {
        i++;
        if (top.kind === 'object') readKey(top);
        return;
      }
      if ((c === '}' && top.kind === 'object') || (c === ']' && top.kind === 'array')) {
        i++;
        stack.pop();
        place(top.value);
        continue;
      }
      fail(`unexpected ${c ?? 'end'}`);
    }
  };
  const readKey = (top: Extract<Frame, { kind: 'object' }>): void => {
    ws();
    if (text[i] !== '"') fail('expected a key');
    const key = str();
    if (top.keys.has(key)) duplicates.push(`${top.path}.${key}`);
    top.keys.add(key);
    top.key = key;
    ws();
    if (text[i] !== ':') fail('expected :');
    i++;
  };
  while (!done) {
    ws();
    const c = text[i];
    const top = stack.at(-1);
    const path = pathOf(top);
    if (c === '{') {
      i++;
      const frame: Frame = { kind: 'object', value: {}, keys: new Set(), path };
      stack.push(frame);
      ws();
      if (text[i] === '}') {
        i++;
        stack.pop();
        place(frame.value);
        afterValue();
      } else readKey(frame);
      continue;
    }
    if (c === '[') {
      i++;
      const frame: Frame = { kind: 'array', value: [], path };
      stack.push(frame);
      ws();
      if (text[i] === ']') {
        i++;
        stack.pop();
        place(frame.value);
        afterValue();
      }
      continue;
    }
    if (c === '"') place(str());
    else {
      const m = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
      if (!m) fail(`unexpected ${c ?? 'end'}`);
      i += m![0].length;
      place(JSON.parse(m![0]));
    }
    afterValue();
  }
  ws();
  if (i !== text.length) fail('trailing text');
  return { value: result, duplicates };
}
