import { describe, expect, it } from 'vitest';
import { fakeExtraction, EXTRACTION_MARKER as FAKE_MARKER } from '../../fake-provider/extraction.ts';
import { EXTRACTION_MARKER, extractionRequest } from './extraction.ts';
import { extractFacts } from './facts.ts';
import { agentTrace } from './fixtures.ts';
import { measure } from './measure.ts';
import { TUNING } from './profile.ts';
import { mergeFacts, parseState, stateMessage, type ExtractedState } from './state.ts';

const valid: ExtractedState = {
  intent: 'ship GA-7',
  difficulty: 'standard',
  reasoning_effort: 'medium',
  active_constraints: {
    identifiers: { ticket: 'GA-7' },
    values: { port: '8080' },
    actions_taken: [{ tool: 'read_file', input: 'src/a.ts', result: 'ok', success: true }],
    files_modified: [{ path: 'src/a.ts', change: 'added guard' }],
    progress: { done: ['read'], current: 'fix', next: ['test'] },
    requirements: { api: 'keep the API' },
    errors_encountered: [{ error: 'TypeError', resolution: 'guarded' }],
  },
  conversation_status: 'in_progress',
};

describe('parseState', () => {
  it('accepts SPEC.md shape, bare or fenced', () => {
    expect(parseState(JSON.stringify(valid))).toEqual({ ok: true, state: valid });
    expect(parseState('Here:\n```json\n' + JSON.stringify(valid) + '\n```')).toEqual({
      ok: true,
      state: valid,
    });
  });

  it('rejects prose, broken JSON and every shape violation, naming the problem', () => {
    expect(parseState('sorry')).toMatchObject({ ok: false, problem: 'no JSON object in the answer' });
    expect(parseState('{"intent": ')).toMatchObject({ ok: false });
    const broken = (f: (s: Record<string, unknown>) => void) => {
      const s = structuredClone(valid) as unknown as Record<string, unknown>;
      f(s);
      return parseState(JSON.stringify(s));
    };
    expect(broken((s) => delete s.intent)).toMatchObject({ ok: false });
    expect(broken((s) => (s.difficulty = 3))).toMatchObject({ ok: false });
    const ac = (s: Record<string, unknown>) => s.active_constraints as Record<string, unknown>;
    expect(broken((s) => (ac(s).identifiers = { a: 1 }))).toMatchObject({ ok: false });
    expect(broken((s) => (ac(s).actions_taken = [{ tool: 't', input: 'i', result: 'r' }]))).toMatchObject({
      ok: false,
    });
    expect(broken((s) => (ac(s).progress = { done: [], next: [] }))).toMatchObject({ ok: false });
    const r = broken((s) => delete ac(s).errors_encountered);
    expect(r.ok === false && r.problem).toContain('errors_encountered');
  });
});

describe('mergeFacts', () => {
  it('adds what the state does not mention, never removes, never duplicates', () => {
    const merged = mergeFacts(valid, {
      paths: ['src/a.ts', 'src/b.ts'],
      identifiers: ['GA-7', 'loadUser'],
      requirements: ['keep the API', 'Every function must have a test.'],
      errors: ['TypeError', 'Error: connection refused'],
    });
    const c = merged.active_constraints;
    expect(c.identifiers).toEqual({ ticket: 'GA-7', 'file:src/b.ts': 'src/b.ts', loadUser: 'loadUser' });
    expect(Object.values(c.requirements)).toEqual(['keep the API', 'Every function must have a test.']);
    expect(c.errors_encountered.at(-1)).toEqual({
      error: 'Error: connection refused',
      resolution: 'unresolved',
    });
    expect(c.errors_encountered).toHaveLength(2);
    expect(parseState(JSON.stringify(merged)).ok).toBe(true);
  });
});

describe('extractFacts', () => {
  it('finds paths, identifiers, user requirements and only unresolved errors', () => {
    const f = extractFacts([
      {
        role: 'user',
        content: 'Fix `parseConfig` in src/config/load.ts. You must not change the CLI flags.',
      },
      { role: 'tool', tool_call_id: '1', content: 'Error: ENOENT cannot open ./etc/app.yaml' },
      { role: 'assistant', content: 'Fixed; it works now.' },
      { role: 'tool', tool_call_id: '2', content: 'TypeError: user_id is undefined' },
    ]);
    expect(f.paths).toEqual(expect.arrayContaining(['src/config/load.ts', './etc/app.yaml']));
    expect(f.identifiers).toEqual(expect.arrayContaining(['parseConfig', 'user_id']));
    expect(f.requirements).toEqual(['You must not change the CLI flags.']);
    expect(f.errors).toEqual(['TypeError: user_id is undefined']);
  });

  it('keeps every generated fact of an agent trace', () => {
    const g = agentTrace(5, 30);
    const f = extractFacts(g.request.messages);
    for (const p of g.facts.paths) expect(f.paths).toContain(p);
    for (const r of g.facts.requirements) expect(f.requirements.join(' ')).toContain(r);
  });
});

describe('extraction prompt and the fake model', () => {
  it('the fake recognises the stage marker and answers a valid state', () => {
    expect(FAKE_MARKER).toBe(EXTRACTION_MARKER);
    const g = agentTrace(3, 12);
    const m = measure(g.request.messages.slice(1, -1));
    const req = extractionRequest('cheap', 'tool-agent', m, TUNING['tool-agent']);
    const prompt = String(req.messages[1]?.content);
    expect(prompt.startsWith(EXTRACTION_MARKER)).toBe(true);
    expect(req.max_tokens).toBe(TUNING['tool-agent'].stateBudgetTokens);
    const parsed = parseState(fakeExtraction(prompt));
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.state.intent).toContain('Ticket GA-103');
    expect(parseState(fakeExtraction(`${prompt} fake:invalid-state`)).ok).toBe(false);
  });

  it('the state message is a user turn that names itself', () => {
    const msg = stateMessage(valid);
    expect(msg.role).toBe('user');
    expect(String(msg.content)).toContain(JSON.stringify(valid));
  });
});
