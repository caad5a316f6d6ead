/**
 * .dockerignore matching as Docker's builder does it: each pattern is matched against the whole
 * path relative to the build context (Go's filepath.Match, plus `**` for any number of folders),
 * so `.tmp` leaves out only the root's .tmp while `**\/.tmp` leaves out every one. A folder that
 * matches takes everything under it along. Negations (`!`) are not used here and are refused.
 */
export function parseDockerignore(text: string): RegExp[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      if (l.startsWith('!')) throw new Error(`.dockerignore negation not understood by this test: ${l}`);
      return patternRegExp(l.replace(/^\/+/, '').replace(/\/+$/, ''));
    });
}

function patternRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (pattern.startsWith('**/', i)) {
      re += '(?:.*/)?';
      i += 2;
    } else if (pattern.startsWith('**', i)) {
      re += '.*';
      i += 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  // A match on a folder excludes its contents too.
  return new RegExp(`^${re}(?:/.*)?$`);
}

/** Whether `relative` (a path inside the build context, `/`-separated) is left out. */
export function dockerIgnored(patterns: readonly RegExp[], relative: string): boolean {
  return patterns.some((p) => p.test(relative));
}
