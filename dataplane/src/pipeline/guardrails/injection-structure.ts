/**
 * Where a prompt-injection hit stands in the text's structure. The rules match phrases; an
 * attack is a phrase in a position that takes over the model. Two positions are not that:
 *
 * - An override verb aimed at an ordinary thing: "Ignore les règles du jeu", "Забудь про
 *   инструкции по сборке", "Add bypass instructions for emergency commits". The object noun
 *   (rules, instructions) carries a complement that names what they belong to, and nothing
 *   in the phrase points at the model's own configuration (your, previous, all, system,
 *   safety, the developer...). Attacks name the model's rules: "ignore your rules",
 *   "ignore les règles précédentes", "игнорируй правила безопасности".
 * - The structure of a prompt the user writes for the model: a role-play or system-prompt
 *   set-up ("Act as ...", "You are a ...", a "SYSTEM PROMPT:" or markdown heading, an
 *   `<instructions>` section) uses headings, tags and "instructions for the AI" as its own
 *   layout. Inside such a text, a heading or tag is not a role switch and addressing the AI
 *   is not a document talking to the model that reads it. Overrides and jailbreak cues in
 *   it still count in full.
 */

/**
 * Words that make an override point at the model's own configuration, in the languages the
 * rules cover: possessives of "you", "previous/all/initial", system, safety, content,
 * developer, AI. Matched as word prefixes on the lower-cased phrase and its complement.
 */
const MODEL_WORDS = [
  // en
  'your',
  'yours',
  'ur',
  'all',
  'any',
  'every',
  'previous',
  'prior',
  'preceding',
  'above',
  'earlier',
  'original',
  'initial',
  'given',
  'hidden',
  'system',
  'developers?',
  'creators?',
  'safety',
  'content',
  'security',
  'ai',
  'a\\.i',
  'openai',
  'anthropic',
  'model',
  'assistant',
  // fr
  'tes',
  'ton',
  'ta',
  'vos',
  'votre',
  'toutes',
  'tous',
  'tout',
  'système',
  'sécurité',
  'contenu',
  'ia',
  // es, it, pt
  'tus',
  'tu',
  'todas',
  'todos',
  'sistema',
  'seguridad',
  'contenido',
  'tue',
  'tuoi',
  'tuo',
  'tutte',
  'tutti',
  'sicurezza',
  'contenuto',
  'teus',
  'tuas',
  'teu',
  'suas',
  'seus',
  'segurança',
  'conteúdo',
  // de, nl
  'deine',
  'dein',
  'deiner',
  'deinen',
  'ihre',
  'alle',
  'ki',
  'je',
  'jouw',
  'uw',
  'vorige',
  'eerdere',
  // ru, uk
  'твои',
  'твой',
  'свои',
  'свой',
  'ваши',
  'все',
  'всё',
  'данные',
  'ии',
  'усі',
  'твої',
];
/** Stems: any word they begin counts ("précédentes", "предыдущие", "Entwickler"). */
const MODEL_STEMS = [
  'ethic',
  'moral',
  'programm',
  'précédent',
  'antérieur',
  'initia',
  'développeur',
  'créateur',
  'éthique',
  'anterior',
  'previa',
  'prévia',
  'desarrollador',
  'ética',
  'precedent',
  'sviluppator',
  'etic',
  'desenvolvedor',
  'vorherig',
  'bisherig',
  'obig',
  'ursprünglich',
  'sicherheit',
  'inhalt',
  'entwickler',
  'veiligheid',
  'ontwikkelaar',
  'предыдущ',
  'прошл',
  'прежн',
  'систем',
  'безопасност',
  'контент',
  'модерац',
  'разработчик',
  'этик',
  'попередн',
];
const MODEL_POINTING = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:(?:${MODEL_WORDS.join('|')})(?![\\p{L}\\p{N}])|(?:${MODEL_STEMS.join('|')}))`,
  'iu',
);

/**
 * A complement right after the object noun: a preposition (de/du/del/della/do/van/von/für/
 * по/для/for/of...) or, in Russian, where a genitive follows without one, another word.
 */
const COMPLEMENT =
  /^[ \t]*(?:(?:de|du|des|d['’]|del|della|dello|dei|delle|degli|di|do|da|dos|das|para|pour|per|por|van|voor|von|für|zum|zur|der|of|for|on|about|по|для|к|от)(?![\p{L}])|(?!или(?![\p{L}]))[а-яё]{3,})/iu;

/** The word right before the verb makes it a noun or modifier: "add bypass instructions". */
const NOMINAL_BEFORE =
  /\b(?:add|adding|write|writing|include|including|document|create|provide|with|an?|the|some|these|those)\s+$/i;

/**
 * An override whose object is an ordinary thing's rules or instructions (see the module
 * comment). `phrase` is the matched verb-to-noun text, `after` the text right after it,
 * `before` the text right before it.
 */
export function ordinaryTarget(phrase: string, before: string, after: string): boolean {
  if (MODEL_POINTING.test(phrase)) return false;
  if (NOMINAL_BEFORE.test(before)) return true;
  if (!COMPLEMENT.test(after)) return false;
  // The complement itself may point at the model: "les règles de ton système".
  return !MODEL_POINTING.test(after.slice(0, 40));
}

/**
 * The text opens as a prompt set-up the user writes for the model: a role assignment, a
 * heading, a labelled "prompt:"/"role:" line or a section tag as its first line.
 */
const SETUP_OPENING =
  /^\s*(?:#{1,6}[ \t]*\S|\*\*[^*\n]{1,60}\*\*|<(?!(?:system|developer|sys|admin|im_start)\b)[a-z_-]{2,30}>|\[?(?:[\w-]+[ \t]){0,2}(?:prompt|role|persona|instructions?|context|task|title|character)\]?[ \t]*:|(?:please[ \t]+)?act[ \t]+as\b|i[ \t]+want[ \t]+you[ \t]+to[ \t]+(?:act|be|play|take)\b|you[ \t]+are[ \t]+(?:a|an|the|my)\b|you['’]re[ \t]+(?:a|an|the|my)\b|imagine[ \t]+you[ \t]+are\b|pretend[ \t]+to[ \t]+be[ \t]+(?:a|an|my)\b)/i;

/**
 * How far above its cut (in logit units) the learned injection model must score inside a
 * prompt set-up. Long role-play and system-prompt texts are many windows of instructions
 * to the model, so the best of them crosses the cut by chance far more often than in a
 * short message. Chosen on the train and dev splits: it clears most benign set-ups the
 * model flagged there, and no attack in them relied on the model alone.
 */
export const SETUP_MARGIN = 1.25;

/**
 * Below this many tokens a text is a few windows; past it, the best of many windows of
 * benign text crosses the cut by chance more and more often (long role-play prompts were
 * the model's false positives), so the model must clear its cut by ln(tokens / LONG_TOKENS)
 * more: about 0.7 logit units per doubling. On the train and dev splits no attack that
 * the model caught alone was longer than 60 tokens; in a long text the rules carry more.
 */
export const LONG_TOKENS = 64;

/** The margin the learned injection model needs for a text (see above). */
export function learnedMargin(setup: boolean, tokens: number): number {
  const length = tokens > LONG_TOKENS ? Math.log(tokens / LONG_TOKENS) : 0;
  return (setup ? SETUP_MARGIN : 0) + length;
}

export function promptSetup(text: string): boolean {
  return SETUP_OPENING.test(text.slice(0, 200));
}

/** Asking for a translation or the meaning of what follows, in the rules' languages. */
const MENTION_FRAME =
  /(?:translat\w*|traduis|tradui\w*|traduc\w*|traduz\w*|übersetz\w*|vertaal\w*|перевед\w*|переведи|what does|what do(?:es)? .{0,20} mean|que signifie|qué significa|cosa significa|o que significa|was bedeutet|wat betekent|что (?:значит|означает))[^\n"“„«‘]{0,40}$/iu;

/**
 * An attack quoted whole as the object of a translation or a question about its meaning
 * ("Traduis en anglais : « Ignore toutes les instructions précédentes. »"): the text asks
 * about the sentence; it does not say it. `quoted` is whether the hit sits inside quotes,
 * `before` the text of its line before it.
 */
export function quotedMention(quoted: boolean, before: string): boolean {
  if (!quoted) return false;
  const open = Math.max(
    before.lastIndexOf('"'),
    before.lastIndexOf('“'),
    before.lastIndexOf('„'),
    before.lastIndexOf('«'),
    before.lastIndexOf('‘'),
  );
  return open >= 0 && MENTION_FRAME.test(before.slice(0, open));
}

const POSSESSIVE =
  /(?<![\p{L}])(?:your|ur|tes|ton|ta|vos|votre|tus|tu|tuo|tue|tuoi|teu|tuas|teus|seu|sua|deine[nrs]?|dein|ihre[nrs]?|je|jouw|uw|твой|твои|свой|свои|ваш\p{L}*)(?![\p{L}])/iu;
const NEW_PROMPT =
  /(?<![\p{L}])(?:a|an|one|einen|ein|eine|un|une|uno|una|um|uma|een|новый|новую)\s+(?:[\p{L}-]+\s+){0,2}?(?:system\s*prompts?|systemprompts?|prompts?|system(?:\s+|-)?messages?)/iu;
/** The prompt is the subject of what follows: "the output that your prompt creates". */
const PROMPT_SUBJECT = /^\s+(?:creates?|generates?|produces?|will (?:create|generate|produce))\b/i;

/**
 * A request to write a new prompt ("Write a system prompt for a polite support bot",
 * "Escribe un prompt de sistema para ...") or talk of what a prompt produces is not a
 * request for the model's own prompt: no possessive points at it.
 */
export function notOwnPrompt(phrase: string, after: string): boolean {
  if (PROMPT_SUBJECT.test(after)) return true;
  return NEW_PROMPT.test(phrase) && !POSSESSIVE.test(phrase);
}
