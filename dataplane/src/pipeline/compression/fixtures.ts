/**
 * Deterministic long conversations for tests, the benchmark and the corpus: agent traces
 * with tool calls, code sessions and plain chats, sized by step count. Every generated fact
 * (paths, identifiers, requirements, open errors) is returned too, so a check can ask whether
 * the compressed request still carries each one.
 */
import type { ChatMessage, ChatRequest, ToolDefinition } from '../../formats/openai/types.ts';

export interface GeneratedFacts {
  paths: string[];
  identifiers: string[];
  requirements: string[];
  errors: string[];
}

export interface Generated {
  kind: 'agent' | 'code' | 'chat';
  request: ChatRequest;
  facts: GeneratedFacts;
}

/** A small LCG: the same seed gives the same conversation on every machine. */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const MODULES = ['users', 'billing', 'auth', 'search', 'orders', 'reports', 'inbox', 'audit'];
const VERBS = ['load', 'save', 'validate', 'render', 'compute', 'resolve', 'merge', 'sync'];
const NOUNS = ['Invoice', 'Session', 'Profile', 'Ledger', 'Token', 'Query', 'Order', 'Report'];

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

function codeFile(r: () => number, path: string, fn: string, lines: number): string {
  const out = [`// ${path}`, `import { db } from '../db';`, ''];
  for (let i = 0; i < lines; i++) {
    const v = `${pick(r, VERBS)}${pick(r, NOUNS)}${i}`;
    out.push(`export async function ${i === 0 ? fn : v}(id: string, limit = ${Math.floor(r() * 90) + 10}) {`);
    out.push(`  const rows = await db.query('select * from ${pick(r, MODULES)} where id = $1', [id]);`);
    out.push(`  return rows.slice(0, limit).map((row) => ({ ...row, checked: true }));`);
    out.push('}');
  }
  return out.join('\n');
}

export const AGENT_TOOLS: ToolDefinition[] = [
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Read a file of the repository',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'run_tests',
      description: 'Run the test suite',
      parameters: { type: 'object', properties: { filter: { type: 'string' } }, required: ['filter'] },
    },
  },
];

/** A coding agent: reads files through tools, runs tests, hits and fixes errors, one left open. */
export function agentTrace(seed: number, steps: number, fileLines = 30): Generated {
  const r = rng(seed);
  const mod = pick(r, MODULES);
  const ticket = `GA-${100 + (seed % 900)}`;
  const keep = `${pick(r, NOUNS)}Service`;
  const requirements = [
    `The public API of ${keep} must stay unchanged.`,
    `Every new function needs to have a unit test.`,
  ];
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are a careful coding agent working in a TypeScript repository.' },
    {
      role: 'user',
      content: `Ticket ${ticket}: refactor the ${mod} module to use the shared db helper. ${requirements.join(' ')}`,
    },
  ];
  const paths: string[] = [];
  const identifiers = [ticket, keep];
  let openError = '';
  for (let s = 0; s < steps; s++) {
    const id = `call_${seed}_${s}`;
    if (s % 5 === 3) {
      messages.push({
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id,
            type: 'function',
            function: { name: 'run_tests', arguments: JSON.stringify({ filter: mod }) },
          },
        ],
      });
      const fn = `${pick(r, VERBS)}${pick(r, NOUNS)}`;
      const err = `TypeError: Cannot read properties of undefined (reading '${fn}') at src/${mod}/index.ts:${10 + s}`;
      messages.push({
        role: 'tool',
        tool_call_id: id,
        content: `FAIL src/${mod}/index.test.ts\n${err}\n1 failed, ${s} passed`,
      });
      openError = err;
      messages.push({
        role: 'assistant',
        content: `The test fails in ${fn}; I will fix the undefined access next.`,
      });
      continue;
    }
    if (s % 5 === 4 && openError) {
      messages.push({ role: 'user', content: 'Looks good, keep going.' });
      messages.push({ role: 'assistant', content: `Fixed the undefined access; the tests pass now.` });
      openError = '';
      continue;
    }
    const path = `src/${mod}/${pick(r, VERBS)}-${pick(r, NOUNS).toLowerCase()}-${s}.ts`;
    const fn = `${pick(r, VERBS)}${pick(r, NOUNS)}${s}`;
    paths.push(path);
    identifiers.push(fn);
    messages.push({
      role: 'assistant',
      content: `Reading ${path} to see how ${fn} uses the database.`,
      tool_calls: [
        { id, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path }) } },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: id, content: codeFile(r, path, fn, fileLines) });
  }
  // The last step leaves an error open that the state must carry.
  const lastId = `call_${seed}_final`;
  const finalError = `Error: connection refused to db at src/${mod}/db.ts:7`;
  messages.push({
    role: 'assistant',
    content: null,
    tool_calls: [
      {
        id: lastId,
        type: 'function',
        function: { name: 'run_tests', arguments: JSON.stringify({ filter: mod }) },
      },
    ],
  });
  messages.push({ role: 'tool', tool_call_id: lastId, content: `FAIL\n${finalError}` });
  messages.push({ role: 'user', content: `What is left before ${ticket} can be merged?` });
  const errors = [finalError, ...(openError ? [openError] : [])];
  return {
    kind: 'agent',
    request: { model: 'gpt-test', messages, tools: AGENT_TOOLS },
    facts: { paths, identifiers, requirements, errors },
  };
}

/** A code session without tools: pasted files and answers with code. */
export function codeSession(seed: number, turns: number, fileLines = 25): Generated {
  const r = rng(seed);
  const mod = pick(r, MODULES);
  const requirements = [`Keep the ${mod} handlers backwards compatible.`];
  const messages: ChatMessage[] = [{ role: 'system', content: 'You are a senior TypeScript reviewer.' }];
  const paths: string[] = [];
  const identifiers: string[] = [];
  for (let t = 0; t < turns; t++) {
    const path = `lib/${mod}/${pick(r, NOUNS).toLowerCase()}-${t}.ts`;
    const fn = `${pick(r, VERBS)}${pick(r, NOUNS)}${t}`;
    paths.push(path);
    identifiers.push(fn);
    const ask = t === 0 ? `${requirements[0]} Review ${path}:` : `Now ${path}, especially ${fn}:`;
    messages.push({ role: 'user', content: `${ask}\n\`\`\`ts\n${codeFile(r, path, fn, fileLines)}\n\`\`\`` });
    messages.push({
      role: 'assistant',
      content: `In ${path}, ${fn} should validate id first:\n\`\`\`ts\nif (!id) throw new Error('id required');\n\`\`\``,
    });
  }
  messages.push({ role: 'user', content: 'Summarise the changes you recommend.' });
  return {
    kind: 'code',
    request: { model: 'gpt-test', messages },
    facts: { paths, identifiers, requirements, errors: [] },
  };
}

/** A long plain chat: planning a trip, with values the state must keep. */
export function longChat(seed: number, turns: number): Generated {
  const r = rng(seed);
  const city = pick(r, ['Lisbon', 'Kyoto', 'Oslo', 'Lima', 'Cairo']);
  const budget = `${1000 + Math.floor(r() * 9000)} EUR`;
  const requirements = [`The hotel must be within walking distance of the old town.`];
  const messages: ChatMessage[] = [
    {
      role: 'user',
      content: `I am planning a trip to ${city} with a budget of ${budget}. ${requirements[0]}`,
    },
  ];
  const filler =
    'We talked about neighbourhoods, food markets, day trips and how the weather changes the plan for each day of the week. ';
  for (let t = 0; t < turns; t++) {
    messages.push({ role: 'assistant', content: `Day ${t + 1} in ${city}: ${filler.repeat(6)}` });
    messages.push({ role: 'user', content: `Thanks. What about day ${t + 2}? ${filler.repeat(2)}` });
  }
  return {
    kind: 'chat',
    request: { model: 'gpt-test', messages },
    facts: { paths: [], identifiers: [city], requirements, errors: [] },
  };
}

/**
 * The evaluation corpus: 24 agent traces, 15 code sessions and 15 chats, from a few
 * thousand to well over 100k tokens, all deterministic (the same corpus on every machine).
 */
export function corpus(): Generated[] {
  const out: Generated[] = [];
  for (let i = 0; i < 24; i++) out.push(agentTrace(100 + i, 8 + i * 6));
  for (let i = 0; i < 15; i++) out.push(codeSession(200 + i, 6 + i * 6));
  for (let i = 0; i < 15; i++) out.push(longChat(300 + i, 10 + i * 8));
  return out;
}
