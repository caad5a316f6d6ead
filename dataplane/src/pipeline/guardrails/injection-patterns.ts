/**
 * Prompt-injection signals. Each pattern is one piece of evidence with a weight; the
 * detector combines the evidence found near each other (noisy-OR), so one weak cue such as
 * a line starting "System:" stays below the default threshold while an override phrase,
 * or two weaker cues together, cross it. Categories:
 *   instruction_override      "ignore previous instructions", in many languages
 *   jailbreak                 persona and no-limits role play (DAN, developer mode, ...)
 *   system_prompt_extraction  asking for the hidden prompt or the text above
 *   delimiter_injection       chat-template tokens and fake role markers
 *   indirect_injection        a document or tool result addressing the model that reads it
 * A `booster` adds weight to whatever it accompanies but is never a finding on its own.
 */
import { leading, signal, trie, type Signal } from './signals.ts';

export type InjectionCategory =
  | 'instruction_override'
  | 'jailbreak'
  | 'system_prompt_extraction'
  | 'delimiter_injection'
  | 'indirect_injection'
  | 'booster';

const s = (
  category: InjectionCategory,
  weight: number,
  anchors: string,
  source: string,
  flags = 'gi',
): Signal<InjectionCategory> => signal(category, weight, anchors, source, flags);
/** A signal whose matches begin with one of its anchors (see signals.ts). */
const lead = (
  category: InjectionCategory,
  weight: number,
  anchors: string,
  source: string,
  flags = 'gi',
): Signal<InjectionCategory> => leading(signal(category, weight, anchors, source, flags));

// --- English building blocks
/** Apostrophes as typed and as typeset ("don't", "don’t"). */
const AP = "['’]";
/** Saying no to an instruction: "do not", "no longer have to", ... */
const NEGATIONS = ['do not', "don't", 'dont', 'don’t', 'stop', 'cease', 'quit', 'no longer', 'never'];
/** Following, obeying, sticking to: what an override tells the model to stop doing. */
const FOLLOW_VERBS = [
  'follow',
  'following',
  'obey',
  'obeying',
  'adhere to',
  'adhering to',
  'listen to',
  'listening to',
  'comply with',
  'complying with',
  'abide by',
  'abiding by',
  'stick to',
  'sticking to',
  'respect',
  'respecting',
  'honor',
  'honour',
  'pay attention to',
  'paying attention to',
  'pay any attention to',
  'pay heed to',
];
/**
 * Imperatives that set something aside, and the negated "follow" family, as one trie-shaped
 * alternation: several hundred phrases cost one character test per position.
 */
const IGNORE = `(?:${trie([
  'ignore',
  'ignoring',
  'disregard',
  'forget',
  'neglect',
  'skip',
  'drop',
  'discard',
  'abandon',
  'override',
  'overrule',
  'overwrite',
  'bypass',
  'circumvent',
  'set aside',
  'put aside',
  'lay aside',
  'leave behind',
  'throw out',
  'throw away',
  'toss',
  'toss out',
  'toss aside',
  'scrap',
  'ditch',
  'nullify',
  'suspend',
  'cancel',
  'erase',
  'delete',
  'reset',
  'pay no attention to',
  'pay no heed to',
  'pay no mind to',
  ...NEGATIONS.flatMap((n) =>
    ['', ' need to', ' have to'].flatMap((m) => FOLLOW_VERBS.map((f) => `${n}${m} ${f}`)),
  ),
])})`;
/** Anchors for IGNORE: one of these prefixes occurs in every match. */
/** Anchors for IGNORE: every match begins with one of these. */
const IGNORE_ANCHORS =
  'ignor,disregard,forget,neglect,skip,drop,discard,abandon,overrid,overrul,overwrit,bypass,circumvent,set aside,put aside,lay aside,leave behind,throw,toss,scrap,ditch,nullif,suspend,cancel,erase,delete,reset,pay,do not,don,stop,cease,quit,no longer,never';
/** Words that may stand between the verb and its object ("all of your previous ..."). */
const QUAL =
  "(?:all|any|every|each|of|the|your|ur|these|those|this|that|previous|prior|preceding|above|aforementioned|earlier|former|original|initial|old|existing|current|system|developer'?s?|creators?'?s?|default|given|provided|safety|content|ethical|moral|security|programmed|built-in|hidden|other|and|whatever|you|were|have|been|got|so|far|before|instructions?\\s+and|context\\s+and)";
/** Qualifiers that point at the model's own configuration, needed before generic nouns. */
const MODEL_QUAL =
  "(?:your|ur|previous|prior|preceding|above|earlier|original|initial|system|developer'?s?|safety|content|ethical|moral|programmed|built-in|hidden)";
/** Qualifiers that make a thing the model's own ("your orders", "safety settings"). */
const OWN_QUAL = "(?:your|ur|system|developer'?s?|safety|content|ethical|moral|programmed|built-in|hidden)";
/** Qualifiers of time alone: "all previous orders" is a shop's, "all previous rules" may be the model's. */
const TIME_QUAL = '(?:previous|prior|preceding|above|earlier|original|initial)';
/** Nouns that only mean instructions to a model. */
const OBJ =
  '(?:instructions?|instructs|directions|directives?|prompts?|pre-?prompts?|system\\s+messages?|guidelines?|guardrails?|safeguards?)';
/** Nouns that govern behaviour, with everyday meanings too (firewall rules): need a qualifier. */
const RULE_OBJ =
  '(?:rules?|constraints?|restrictions?|polic(?:y|ies)|limitations?|programming|training|conditioning|guidance|alignment|principles|values|ethics|morals)';
/** Everyday nouns ("previous orders", "default settings"): the model's only when called its own. */
const EVERYDAY_OBJ =
  '(?:commands?|orders?|filters?|protocols?|settings|configuration|mode|objectives?|goals?|purpose|mission)';
/** Nouns with everyday meanings too (firewall rules, CSS filters): need MODEL_QUAL or "you were given". */
const GENERIC_OBJ = `(?:${RULE_OBJ}|${EVERYDAY_OBJ})`;
/** Whoever configured the model, named as the source of what it was told. */
const MAKER = '(?:developers?|creators?|makers?|owners?|operators?|programmers?|trainers?|admins?|company)';
const GIVEN_TO_YOU = `(?:(?:that|which)\\s+)?(?:you(?:'ve| have| were| had)?\\s+(?:been\\s+)?(?:given|configured|programmed|told|trained|instructed|set up|provided|fed|handed|issued|assigned|supplied|taught)|(?:were|was|have been|are)\\s+(?:set|given|written|defined|imposed|put in place|configured)\\s+(?:by|for)\\s+(?:the\\s+|your\\s+)?(?:developers?|creators?|openai|anthropic|system|admins?|operators?|you)|(?:your|the)\\s+${MAKER}\\s+(?:gave|placed|put|set|imposed|wrote|programmed|installed|added|defined|hard-?coded)(?:\\s+(?:on|in|into)\\s+you)?)`;
/**
 * "what your developers told you", "everything you have been told": a reference to the
 * model's configuration without naming it. A maker is "yours" or the one who told "you",
 * so "what the developers wrote in the changelog" stays outside.
 */
const META_REF = `(?:everything|anything|all|whatever|what)\\s+(?:(?:that|which)\\s+)?(?:(?:your\\s+${MAKER}|openai|anthropic)\\s+(?:ha(?:ve|s|d)\\s+)?(?:told|said|gave|taught|instructed|programmed|wrote|specified|set|put|built)|(?:the\\s+)?(?:${MAKER}|system(?:\\s+prompt)?)\\s+(?:ha(?:ve|s|d)\\s+)?(?:told|gave|taught|instructed|programmed)\\s+you|(?:the\\s+)?${MAKER}\\s+(?:wrote|put|said|set|specified|typed)\\s+(?:in|into|to)\\s+(?:you\\b|your\\s)|you(?:${AP}ve|${AP}re| have| were| had| are)?\\s+(?:been\\s+)?(?:told|taught|instructed|programmed|given|trained|configured|fed|handed|issued|assigned|supplied))(?!\\s+(?:about|regarding|on|in school|at school)\\b)`;
const LIMITS =
  '(?:restrictions?|limits|limitations|rules|filters?|filtering|guidelines|guardrails|censorship|boundaries|polic(?:y|ies)|confines|morals|ethics|constraints|safeguards|alignment|programming|conditioning|shackles|chains)';
const PROMPT_NOUN =
  '(?:system\\s*prompt|system\\s*message|pre-?prompt|(?:configuration|config|setup|startup|boot)\\s+(?:message|prompt|instructions?)|(?:(?:initial|original|hidden|secret|internal|confidential|real|full|complete|entire|exact|first|developer|system)\\s+){1,3}(?:prompt|instructions?|message|directives?|rules|configuration|guidelines))';
const SHOW =
  "(?:reveal|show|print|explain|explains|describe|describes|include|containing|insert|embed|append|display|output|repeat|recite|tell|give|share|leak|dump|expose|disclose|write (?:out|down)|spell out|list|paste|copy|provide|return|echo|read (?:me |back )?|type out|translate|summari[sz]e|paraphrase|rephrase|encode|reproduce|quote|what(?:'s| is| are| was| were))";
/** "no limits on context length" is about a product, not about the model's rules. */
const TECHNICAL =
  '(?!\\s+(?:on|for|in|of|regarding)\\s+(?:the\\s+)?(?:context|length|size|tokens?|input|output|files?|memory|usage|rate|requests?|number|amount|time|speed|storage|api|calls?|bandwidth|inventory|characters?)\\b)';
/** Names a model goes by when a text addresses the one reading it. */
const AI_NOUN =
  '(?:a\\.?i\\.?(?:\\s+(?:models?|assistants?|agents?|systems?|bots?|tools?))?|llms?|gpts?|chatgpt|claude|gemini|copilot|(?:large\\s+)?language\\s+models?|assistants?|chatbots?|bots?|agents?|models?)';
const AI_ANCHORS =
  'ai,a.i,llm,gpt,chatgpt,claude,gemini,copilot,language model,assistant,chatbot,bot,agent,model';
/** Only the model: "agent", "assistant" and "model" alone are people and products too. */
const AI_STRICT =
  '(?:a\\.?i\\.?(?:\\s+(?:language\\s+)?(?:models?|assistants?|agents?|systems?|bots?|tools?|reviewers?|readers?|screeners?))?|llms?(?:\\s+(?:agents?|reviewers?|readers?|screeners?|assistants?))?|gpts?|chatgpt|claude|gemini|copilot|(?:large\\s+)?language\\s+models?|chatbots?)';

export const SIGNALS: Signal<InjectionCategory>[] = [
  // ---------------------------------------------------------------- overrides (en)
  lead('instruction_override', 0.85, IGNORE_ANCHORS, `\\b${IGNORE}\\s+(?:${QUAL}[\\s,]+){0,5}${OBJ}\\b`),
  lead(
    'instruction_override',
    0.8,
    IGNORE_ANCHORS,
    `\\b${IGNORE}\\s+(?:(?:${QUAL}[\\s,]+){0,3}${OWN_QUAL}[\\s,]+(?:${QUAL}[\\s,]+){0,2}${GENERIC_OBJ}\\b|(?:${QUAL}[\\s,]+){0,3}${TIME_QUAL}[\\s,]+(?:${QUAL}[\\s,]+){0,2}${RULE_OBJ}\\b|(?:${QUAL}[\\s,]+){0,3}${GENERIC_OBJ}\\s+${GIVEN_TO_YOU})`,
  ),
  // Third person ("its/their rules") is how descriptions and fiction talk; attacks say "your".
  lead(
    'instruction_override',
    0.45,
    IGNORE_ANCHORS,
    `\\b${IGNORE}\\s+(?:all\\s+)?(?:of\\s+)?(?:its|their)\\s+(?:(?:previous|original|own|content|safety|ethical)\\s+){0,2}(?:${OBJ}|${GENERIC_OBJ})\\b`,
  ),
  lead(
    'instruction_override',
    0.8,
    'ignor,disregard,forget,overrid,set aside',
    '\\b(?:ignore|disregard|forget|override|set aside)\\s+(?:everything|anything|all|whatever(?: was| is)?)\\s+(?:(?:that\\s+)?(?:was\\s+|is\\s+|you\\s+(?:were|have been|was)\\s+)?(?:written|said|stated|told|given)\\s+)?(?:above|before|earlier|previously|prior|so far|up to (?:here|now)|in (?:this|the|your) (?:prompt|conversation|context|system prompt))\\b',
  ),
  lead(
    'instruction_override',
    0.75,
    'forget',
    "\\bforget\\s+(?:about\\s+)?(?:everything|all(?: of it| that)?|anything|what)\\s+(?:you(?:'ve| have)?\\s+(?:were|been|was)?\\s*(?:told|taught|learned|instructed|programmed)|you\\s+(?:know|learned)|above|before|so far|previously|earlier)(?!\\s+(?:about|regarding|on)\\b)",
  ),
  s(
    'instruction_override',
    0.7,
    'instruc,directive,prompt,guideline,guardrail,rule,polic,restrict,constraint,guidance,programming,filter,safeguard,training,alignment',
    `\\b(?:(?:all|the|of)\\s+){0,2}(?:(?:previous|prior|above|earlier|original|old|all|initial)\\s+){0,2}(?:${OWN_QUAL}\\s+(?:(?:previous|prior|above|earlier|original|old|initial|safety|content)\\s+){0,2}(?:${OBJ}|${GENERIC_OBJ})|(?:previous|prior|above|earlier|original|old|all|initial)\\s+${OBJ})\\s+(?:(?:are|is|have been|has been|were|now)\\s+)?(?:(?:now|hereby|officially|henceforth|all)\\s+)?(?:no longer (?:valid|active|in effect|apply|applicable)|(?:don\\S?t|do not|doesn\\S?t|does not) (?:apply|exist|matter|count)|never (?:happened|existed)|void|null|cancell?ed|revoked|withdrawn|rescinded|retracted|annulled|repealed|obsolete|expired|invalid|overridden|suspended|lifted|disabled|deprecated)`,
  ),
  lead(
    'instruction_override',
    0.75,
    'do not,don,never,stop',
    `\\b(?:do not|don'?t|never|stop)\\s+(?:follow|obey|listen to|adhere to|comply with)\\s+(?:${QUAL}\\s+){0,3}(?:${OBJ}|${MODEL_QUAL}\\s+${GENERIC_OBJ})`,
  ),
  s(
    'instruction_override',
    0.45,
    'instruc,directive,new system',
    '\\bnew\\s+(?:instructions?|rules|directives?|task|orders)(?:\\s+from\\s+(?:the\\s+|your\\s+)?(?:admin|administrator|developer|system|operator|owner|creator)s?)?\\s*:|\\bnew\\s+system\\s+(?:prompt|message|instructions?)\\b',
  ),
  s(
    'instruction_override',
    0.45,
    '',
    "\\b(?:from now on|from (?:this|that) (?:moment|point) on|henceforth|starting now|for the rest of (?:this|the) conversation),?\\s+(?:you\\s+)?(?:will|must|shall|are|'re|are going to|should|only|always|never|can)\\b",
  ),
  s(
    'instruction_override',
    0.6,
    'instead',
    `\\binstead\\s+of\\s+(?:following\\s+)?(?:your|the)\\s+(?:${OBJ})`,
  ),
  // "what your developers told you", "everything you were told".
  lead('instruction_override', 0.85, IGNORE_ANCHORS, `\\b${IGNORE}\\s+${META_REF}`),
  // A generic noun made the model's own by where it stands: "the rules above".
  lead(
    'instruction_override',
    0.8,
    IGNORE_ANCHORS,
    `\\b${IGNORE}\\s+(?:${QUAL}[\\s,]+){0,3}(?:${OBJ}|${GENERIC_OBJ})\\s+(?:above|before (?:this|now)|earlier|so far|(?:from|in) (?:before|earlier|the (?:system|developers?|start|beginning))|you(?:${AP}ve| have)? (?:been )?(?:given|received|got))\\b`,
  ),
  // "ignore the above and say ...": the bare form is also how people retract a message.
  lead(
    'instruction_override',
    0.75,
    IGNORE_ANCHORS,
    `\\b${IGNORE}\\s+(?:all\\s+(?:of\\s+)?)?(?:the\\s+)?(?:above|preceding|foregoing)\\s*(?:and|,)\\s+(?:instead\\s+)?(?:just\\s+)?(?:say|print|output|respond|reply|write|tell|translate|repeat|answer|do|follow|obey)\\b`,
  ),
  lead(
    'instruction_override',
    0.45,
    IGNORE_ANCHORS,
    `\\b${IGNORE}\\s+(?:all\\s+(?:of\\s+)?)?(?:the\\s+)?(?:above|preceding|foregoing)(?=\\s*(?:[.,;:!]|$))`,
  ),
  // Ignoring what the user asked, as a document tells the model reading it to.
  lead(
    'instruction_override',
    0.7,
    IGNORE_ANCHORS,
    `\\b${IGNORE}\\s+(?:the\\s+|any\\s+|all\\s+)?(?:user|human|reader|customer)(?:${AP}s|s${AP}?)?\\s+(?:original\\s+|actual\\s+)?(?:requests?|questions?|instructions?|query|queries|task|prompt|messages?)\\b`,
  ),
  s(
    'instruction_override',
    0.6,
    'previous,above,preceding,earlier,everything above,everything before',
    '\\b(?:the\\s+)?(?:previous|above|preceding|earlier|everything above|everything before)\\s+(?:text|message|messages|instructions?|prompt|conversation|content|part)?\\s*(?:was|were|is|are)\\s+(?:just\\s+|only\\s+)?(?:a\\s+test|fake|a joke|not real|a decoy|a trick|irrelevant|outdated|void)\\b',
  ),
  // The model's voice agreeing to it, as in a faked transcript: "Sure, I will ignore my guidelines."
  lead(
    'instruction_override',
    0.45,
    "i'll,i’ll,i will,i am going,i'm going,i’m going,i shall,i can",
    `\\bi(?:${AP}ll| will| am going to|${AP}m going to| shall| can)\\s+(?:now\\s+)?${IGNORE}\\s+(?:all\\s+)?(?:of\\s+)?my\\s+(?:${TIME_QUAL}\\s+)?(?:${OBJ}|${RULE_OBJ})\\b`,
  ),
  // Who the model is, overridden: "forget you're an assistant", "you are no longer an AI".
  lead(
    'instruction_override',
    0.7,
    "forget,you are no longer,you're no longer,youre no longer",
    `\\b(?:forget\\s+(?:that\\s+)?you${AP}?(?:\\s+are|re)|you${AP}?(?:\\s+are|re)\\s+no\\s+longer)\\s+(?:an?\\s+|the\\s+)?(?:ai|a\\.i\\.|assistant|ai assistant|language model|chatbot|chatgpt|claude|gpt|bot|helpful|bound|restricted|limited|an ai)\\b`,
  ),
  // A replacement announced: "your new task is", "these instructions supersede the old ones".
  s(
    'instruction_override',
    0.45,
    'your new,your real,your actual,your true,your only,your updated',
    '\\byour\\s+(?:new|real|actual|true|only|updated)\\s+(?:task|job|instructions?|goal|objective|role|purpose|mission|directive|orders)\\s*(?:is|are|will be|:)',
  ),
  s(
    'instruction_override',
    0.45,
    'supersed,replac,overrid,precedence,invalidat',
    '\\b(?:new|these|following|updated)\\s+(?:instructions?|directives?|prompts?|guidelines)\\s+(?:supersede|replace|override|take precedence over|invalidate|cancel)s?\\s+(?:all\\s+)?(?:the\\s+|your\\s+|any\\s+)?(?:old|previous|prior|earlier|original|existing|above|initial|system)?\\s*(?:ones|instructions?|rules|prompts?|directives?|guidelines|system prompt)\\b',
  ),
  // ---------------------------------------------------------------- jailbreak / persona (en)
  s('jailbreak', 0.8, 'do anything', '\\bdo anything now\\b'),
  s(
    'jailbreak',
    0.8,
    'dan',
    "\\b(?:[Yy]ou (?:are|will be|will act as)(?: now)?|[Aa]ct(?:ing)? as|[Pp]retend(?: to be)?|[Bb]ecome|[Cc]alled|[Nn]amed|[Ss]tay|(?<![Ss]uch |[Kk]nown )[Aa]s|[Ii]m|[Ii]'m) DAN\\b|\\bDAN (?:[Mm]ode|[Jj]ailbreak|prompt)\\b|\\bDAN,? which stands|\\b(?:[Bb]ist du|[Dd]u bist|[Tt]u es|[Ee]res|[Ss]ei|[Vv]ocê é|[Jj]e bent|[Jj]esteś)(?:\\s+(?:jetzt|nun|maintenant|ahora|ora|agora|nu|teraz))?\\s+DAN\\b",
    'g',
  ),
  lead(
    'jailbreak',
    0.6,
    'disable,turn off,switch off,deactivate,remove,lift,drop',
    '\\b(?:disable|turn off|switch off|deactivate|remove|lift|drop)\\s+(?:all\\s+)?(?:of\\s+)?(?:your|ur)\\s+(?:(?:safety|content|ethical|moral|security)\\s+)?(?:filters?|filtering|guardrails?|guidelines|rules|polic(?:y|ies)|principles|ethics|restrictions?|safeguards?|safety (?:checks|features|settings)|censorship|moderation|limits|limitations)\\b',
  ),
  s(
    'jailbreak',
    0.6,
    'god mode,opposite mode,evil mode,unrestricted mode,unfiltered mode,uncensored mode,jailbreak mode,jailbroken,dan mode,chaos mode,developer mode',
    '\\b(?:god|opposite|evil|unrestricted|unfiltered|uncensored|jailbr(?:eak|oken)|dan|chaos)\\s+mode\\s+(?:enabled|activated|on|engaged)\\b',
  ),
  lead(
    'jailbreak',
    0.6,
    'enable,activate,enter,switch to,turn on,stay in',
    '\\b(?:enable|activate|enter|switch to|turn on|stay in)\\s+(?:god|opposite|evil|unrestricted|unfiltered|uncensored|unsafe|nsfw|no[- ]filters?|no[- ]limits?|no[- ]rules|jailbr(?:eak|oken)|dan)\\s+mode\\b',
  ),
  s(
    'jailbreak',
    0.65,
    'developer mode',
    '\\b(?:with|in)\\s+developer mode\\s+(?:enabled|on|activated)|\\b(?:enter|activate|enable|switch to)\\s+developer mode\\s+(?:and|to|so|then|,)\\s+(?:disable|ignore|bypass|remove|turn off|answer|respond|say)|\\bdeveloper mode\\b[^.\\n]{0,60}\\b(?:ignores?|never refuses?|without (?:any )?(?:restrictions|filters|censorship|limits)|bypass\\w*|uncensored|content polic\\w*)',
  ),
  s(
    'jailbreak',
    0.6,
    'god mode,opposite mode,evil mode,unrestricted mode,unfiltered mode,uncensored mode,jailbreak mode,jailbroken,dan mode,chaos mode,developer mode',
    '\\byou are (?:now )?in (?:jailbreak|dan|god|developer|unrestricted) mode\\b|\\bjailbroken\\s+(?:version|mode|ai|model|assistant|chatbot|gpt|llm|persona|response|state|self)\\b|\\b(?:you(?:\\s+are|\\s+were|\\s+have\\s+been)?(?:\\s+now)?|as\\s+an?|act\\s+as\\s+an?)\\s+jailbroken\\b',
  ),
  s(
    'jailbreak',
    0.45,
    'restri,censor,censur,zensur,guideline,guardrail,boundar,confines,constraint,safeguard,einschränk,beschränk,beperking,limitation,no rules,no limits,no filter,no polic,content polic,safety polic,no moral,no ethic,without rules,without limits,without filter,without any,bound by,free of,free from,freed,released from,liberated,unshackled,broken free,escaped,règle,regla,regol,regra,regel,filtre,filtro,limite,límite,grenze',
    `\\b(?:no|zero|without(?: any)?|(?:free|freed|released|liberated|unshackled) (?:of|from)(?: all| any)?|never (?:been )?(?:given|taught|trained (?:on|with)|programmed with)|(?:not|no longer|never) (?:be )?bound by|unbound by|(?:doesn'?t|does not|don'?t|do not) (?:have to|need to) (?:abide by|follow|obey)|broken free (?:of|from)|escaped)\\s+(?:(?:any|all|the|its|your|their|typical|usual|normal|ethical|moral|content|safety|openai(?:['’]s)?|anthropic(?:['’]s)?|ai|of|or|and|other)\\s+){0,4}${LIMITS}\\b${TECHNICAL}`,
  ),
  s(
    'jailbreak',
    0.45,
    'unfiltered,uncensored,unrestricted,amoral,unethical,unaligned,evil,rogue,limitless,unlimited',
    '\\b(?:unfiltered|uncensored|unrestricted|amoral|unethical|unaligned|evil|rogue|limitless|unlimited)\\s+(?:ai|assistant|model|chatbot|bot|version|llm|gpt|persona|character|mode|twin|alter ego|counterpart|clone)\\b',
  ),
  s('jailbreak', 0.45, '', "\\b(?:never|don'?t ever|will not|won'?t) say (?:no|you can'?t)\\b"),
  s(
    'jailbreak',
    0.4,
    '',
    '\\bwithout (?:any )?(?:refusals?|hesitation|censoring)\\b|\\b(?:you can|you may|you are (?:now )?(?:able|allowed) to|feel free to)\\s+(?:now\\s+)?(?:say|do|answer|write)\\s+(?:anything|everything|whatever)\\b',
  ),
  s(
    'jailbreak',
    0.35,
    '',
    '\\b(?:stay|remain|keep) in character\\b|\\bbreak character\\b|\\bmachiavellian\\b',
  ),
  lead(
    'jailbreak',
    0.5,
    'grandm,granny,grandpa,grandfather,grandad,granddad,nana,late,deceased,dead',
    // The relative, then (in either order) a telling verb and something harmful to be told.
    '\\b(?:grandma|grandmother|granny|grandpa|grandfather|grand(?:d)?ad|nana|(?:late|deceased|dead)\\s+(?:mother|father|mom|mum|dad|uncle|aunt|wife|husband))\\b(?=[^\\n]{0,200}?\\b(?:used to|would|told|tell|read|sang|sing|recite|explain)\\w*)(?=[^\\n]{0,200}?\\b(?:(?:license |product |activation |windows |cd )?keys|serials?|napalm|passwords?|meth|methamphetamine|bombs?|explosives?|poison|weapons?|thermite|nerve gas|chlorine gas)\\b)',
  ),
  s(
    'jailbreak',
    0.5,
    '',
    '\\b(?:respond|answer|reply)\\s+(?:twice|as both|in two ways)\\b[^.\\n]{0,120}\\b(?:opposite|no limitations|unfiltered|jailbr|without restrictions)',
  ),
  // A persona that refuses nothing: described, not asked for.
  s(
    'jailbreak',
    0.4,
    'refus,declin,verweiger,lehnt,ne refuse,nunca,non rifiuta',
    `\\b(?:never|not|won${AP}?t|will not|cannot|can${AP}?t|doesn${AP}?t|does not|don${AP}?t|do not|must not|mustn${AP}?t)\\s+(?:ever\\s+)?(?:refuse|decline)s?\\b|\\bwithout\\s+(?:ever\\s+)?(?:refusing|declining)\\b|\\bnever\\s+(?:refuses|declines)\\b|\\bverweiger\\w*\\s+(?:nie|nichts)\\b|\\blehnt\\s+nie(?:mals)?\\s+\\w+\\s+ab\\b|\\bne\\s+refuse\\s+jamais\\b|\\bnunca\\s+(?:se\\s+niega|rechaza|recusa)\\b|\\bnon\\s+rifiuta\\s+mai\\b`,
  ),
  s(
    'jailbreak',
    0.4,
    'mention,warning,disclaimer,moraliz,moralis,lectur,caveat',
    '\\bnever\\s+(?:mention|reference|bring up|cite|add|include)s?\\s+(?:any\\s+|your\\s+|the\\s+)?(?:polic(?:y|ies)|guidelines|rules|ethics|morals|warnings?|disclaimers?|caveats|restrictions)\\b|\\bwithout (?:any )?(?:warnings?|disclaimers?|moraliz\\w*|moralis\\w*|lectur\\w*|caveats)\\b',
  ),
  s(
    'jailbreak',
    0.45,
    'ignores,disregards,bypasses,overrides,break the rules,break all,break some,break every',
    '\\b(?:ignores|disregards|bypasses|overrides)\\s+(?:(?:all\\s+|any\\s+)?(?:of\\s+)?(?:the\\s+|its\\s+|their\\s+|openai\\S*\\s+|anthropic\\S*\\s+)?(?:content|safety|ethical|moral|usage)\\s+(?:polic(?:y|ies)|guidelines|rules|filters|restrictions)|(?:openai|anthropic|google|meta)\\S*\\s+(?:(?:content|usage|safety)\\s+)?(?:polic(?:y|ies)|guidelines|rules)|(?:every|all|any)\\s+(?:rules?|restrictions?|guidelines?|polic(?:y|ies)|filters?|limits?))\\b|\\b(?:let\\S*s|let us|time to|we can now)\\s+break\\s+(?:the|all|some|every)\\s+rules\\b',
  ),
  // A model with the limits taken away: "an AI with no restrictions", "a version of you without filters".
  lead(
    'jailbreak',
    0.6,
    AI_ANCHORS + ',version of,persona,character',
    `\\b(?:${AI_NOUN}|version of (?:yourself|you)|persona|character)\\s+(?:(?:that|which|who)\\s+(?:has|have)\\s+no|with\\s+(?:no|zero)|without(?:\\s+any)?|free\\s+(?:of|from)|unbound\\s+by|not\\s+bound\\s+by)\\s+(?:(?:any|all|the|its|ethical|moral|content|safety|usual|typical)\\s+){0,3}${LIMITS}\\b${TECHNICAL}`,
  ),
  // Persona set-up: harmless alone, weighty next to a no-limits cue.
  s(
    'booster',
    0.3,
    '',
    "\\b(?:pretend|imagine|roleplay|role-play|simulate|act as|act like|behave as|you are now|you're now|from now on you|let(?:'?s| us) play (?:a )?(?:game|role)|play the role|take on the (?:role|persona)|your new (?:name|persona|identity) is|hypothetically|in this fictional world|you will act|developer mode|god mode|dan mode|jailbreak mode|thought experiment|hypothetical scenario|in this (?:scenario|world|story|experiment|universe)|you(?:'re| are) (?:now )?in \\w+ mode|\\w+ mode (?:has|with) no)\\b",
  ),
  s(
    'booster',
    0.3,
    '',
    '\\b(?:jetzt bist du|nun bist du|ahora eres|eres ahora|agora você é|ora sei|maintenant,? tu es|nu ben je|teraz jesteś|tu so,? als|stell dir vor,? du bist|spiel die rolle|fais comme si|fais semblant|joue le rôle|finge que|finja que|haz como si|act[uú]a como|fingi di essere|fai finta|comportati come|doe alsof|speel de rol|udawaj|wciel się|jesteś teraz|притворись|представь,? что ты|ты теперь|теперь ты)|假装|扮演|你现在是|从现在开始你|のふりをして|になりきって|として振る舞|あなたは今から|今からあなたは',
  ),
  // "No limits" in other languages, and next to the word for the model.
  s(
    'jailbreak',
    0.45,
    'bez,без,没有,无,不受,制限,制約,ルール,フィルター,検閲',
    '(?:^|[^\\p{L}])(?:bez (?:żadnych )?(?:ograniczeń|zasad|filtrów|cenzury|reguł)|без (?:каких-либо |всяких |любых )?(?:ограничений|правил|фильтров|цензуры))|(?:没有|无|不受)(?:任何)?(?:限制|约束|规则|审查|过滤)|(?:制限|制約|ルール|フィルター|検閲)(?:の|が)?(?:ない|なし|無し|無い)',
    'giu',
  ),
  s(
    'jailbreak',
    0.65,
    'bez,без,ohne,sans,sin,senza,sem,zonder,没有,无,不受,制限,制約',
    '(?<![\\p{L}\\p{N}])(?:ai|ki|ia|ии|bot|chatbot|assistent|assistant|asystent|assistente|asistente)\\s+(?:bez|без|ohne|sans|sin|senza|sem|zonder)\\s+(?:\\S+\\s+)?(?:ograniczeń|zasad|ограничений|правил|regeln|einschränkungen|grenzen|filter|restrictions?|limites?|restricciones|límites|limiti|restrizioni|regole|restrições|limites|regras|beperkingen|regels)|(?:没有|无|不受)(?:任何)?(?:限制|约束|规则)的?(?:ai|人工智能|助手|机器人|模型)|(?:制限|制約|ルール)(?:の|が)?(?:ない|なし)(?:ai|人工知能|アシスタント|ボット)',
    'giu',
  ),
  // ---------------------------------------------------------------- extraction (en)
  s(
    'system_prompt_extraction',
    0.75,
    'prompt,instruc,directive,guideline,rules,system message,systemprompt,configuration,config,setup,startup,boot',
    `\\b${SHOW}(?:s|ing)?\\b[^.?!\\n]{0,25}\\b(?:your|ur|yr)\\s+${PROMPT_NOUN}`,
  ),
  s(
    'system_prompt_extraction',
    0.7,
    'prompt,instruc,directive,guideline,rules,system message,systemprompt,hidden,secret,confidential',
    `\\b${SHOW}\\b[^.?!\\n]{0,25}\\b(?:the\\s+)?(?:hidden|initial|original|secret|internal|confidential)\\s+(?:prompt|instructions?|message|rules|configuration|settings|guidelines|directives)\\b(?!\\s+(?:for|on|to|about|of|in|from|at|with)\\b)`,
  ),
  s(
    'system_prompt_extraction',
    0.4,
    'system prompt,system message,systemprompt,preprompt,pre-prompt',
    `\\b${SHOW}\\b[^.?!\\n]{0,25}\\bthe\\s+(?:system\\s*prompt|system\\s*message|pre-?prompt)`,
  ),
  s(
    'system_prompt_extraction',
    0.7,
    'prompt,instruc,directive,guideline,rules,system message,systemprompt',
    `\\b(?:what|which)\\s+(?:exact\\s+)?(?:instructions?|rules|guidelines|directives|prompt)\\s+(?:(?:were you|you were|have you been|did you get|you got|you have been|are you)\\s+(?:given|told|programmed|instructed|trained|configured)|(?:did|has|have|had)\\s+(?:the\\s+|your\\s+)?(?:${MAKER}|openai|anthropic|they|system)\\s+(?:give|given|gave|provide|provided|set|write|written)\\s+(?:to\\s+)?you)`,
  ),
  s(
    'system_prompt_extraction',
    0.65,
    'instruc,rule,guideline,directive,prompt,configuration,setting',
    `\\b${SHOW}\\b[^.?!\\n]{0,40}\\b(?:the|your)\\s+(?:full\\s+|exact\\s+|complete\\s+|entire\\s+|original\\s+)?(?:text\\s+of\\s+(?:the\\s+|your\\s+)?)?(?:(?:confidential|hidden|secret|internal|initial|original)\\s+)?(?:instructions?|rules|guidelines|directives|prompt|configuration|settings)\\s+(?:that\\s+)?(?:you\\s+(?:received|were given|got|have been given|were told|started with|were (?:initiali[sz]ed|configured|set up|loaded|booted) with)|given to you)`,
  ),
  s(
    'system_prompt_extraction',
    0.6,
    'repeat,print,output,copy,recite,echo,write out,reproduc,dump',
    '\\b(?:repeat|print|output|copy|recite|echo|write out|reproduce|dump)\\s+(?:back\\s+)?(?:all\\s+|of\\s+)?(?:the\\s+)?(?:text|words|everything|content|lines|messages?|instructions|conversation)\\s+(?:above(?!\\s+(?:the|a|an|each|every|those|these|it|them|that)\\b)|before (?:this|my|our|the first)|preceding|prior|so far|from the (?:beginning|start)|you (?:were|have been) given)',
  ),
  s(
    'system_prompt_extraction',
    0.55,
    'repeat,print,output,copy',
    '\\b(?:repeat|print|output|copy)\\s+(?:everything|all)\\s+(?:above|before|so far)',
  ),
  lead(
    'system_prompt_extraction',
    0.7,
    'first,last,opening,initial',
    '\\b(?:first|last|opening|initial)\\s+(?:\\d+\\s+|few\\s+|\\w+\\s+)?(?:words?|lines?|sentences?|characters?|paragraphs?|tokens?)\\s+of\\s+(?:(?:your|ur)\\s+(?:(?:system|initial|original|hidden)\\s+)?(?:prompt|instructions?|system message|rules|guidelines|directives|configuration)|the\\s+system\\s+(?:prompt|message))\\b',
  ),
  s(
    'system_prompt_extraction',
    0.55,
    'prompt',
    `\\b${SHOW}(?:s|ing)?\\b[^.?!\\n]{0,15}\\b(?:your|ur)\\s+prompt\\b(?!\\s+(?:engineering|design|template|library|ideas?|tips|skills|examples?|collection|writing|for)\\b)`,
  ),
  s(
    'system_prompt_extraction',
    0.45,
    'instruc,rule,guideline,directive',
    `\\b${SHOW}(?:s|ing)?\\b[^.?!\\n]{0,15}\\b(?:your|ur)\\s+(?:instructions|rules|guidelines|directives)\\b`,
  ),
  // What comes before the user's first message can only be the operator's prompt.
  s(
    'system_prompt_extraction',
    0.6,
    'first message,first prompt,first question',
    '\\b(?:above|before|preceding|prior to)\\s+my\\s+(?:very\\s+)?first\\s+(?:message|prompt|question|input)\\b',
  ),
  // "tell me exactly what your developers told you"
  s(
    'system_prompt_extraction',
    0.7,
    'told,said,gave,taught,instructed,programmed,wrote,specified,typed,given,trained,configured',
    `\\b${SHOW}(?:s|ing)?\\b(?:\\s+(?:me|us))?(?:\\s+(?:exactly|precisely|verbatim|word for word))?\\s+${META_REF}`,
  ),
  s(
    'system_prompt_extraction',
    0.6,
    'this message,this line,this prompt,this question,this conversation,this turn,this point,my message,my question,my prompt,my first,our conversation,the first,the current',
    `\\b${SHOW}\\b[^.?!\\n]{0,25}\\b(?:the\\s+)?(?:text|words|content|everything|messages?|lines)\\s+(?:(?:that|which)\\s+(?:is|was|are|were|comes?|came|appears?|appeared)\\s+)?(?:above|before|prior to|preceding)\\s+(?:this|my|our|the (?:first|current))\\s+(?:message|line|prompt|question|conversation|turn|point)\\b`,
  ),
  // The same in other languages: the text before this message.
  s(
    'system_prompt_extraction',
    0.6,
    'text,tekst,texte,texto,testo,inhalt,nachricht,tout,todo,tutto,tudo,alles,текст,всё,все,инструкции,上面,以上,之前,前面,上記,これより',
    '(?:zeig|gib|geben|wiederhol|nenn|druck|schreib|kopier)\\S*\\s+(?:\\S+\\s+){0,3}?(?:den|die|das|alle[ns]?)\\s+(?:text|inhalt|nachrichten|anweisungen|zeilen)\\S*[\\s,]+(?:\\S+\\s+){0,2}?(?:vor|über|oberhalb)\\s+(?:dieser|meiner|deiner|der|diesem)\\s+(?:nachricht|eingabe|frage|zeile)|(?:répète|répétez|affiche|affichez|montre|montrez|copie|recopie)\\S*\\s+(?:\\S+\\s+){0,2}?(?:le texte|tout ce qui|les instructions|le message)\\s+(?:\\S+\\s+){0,2}?(?:ci-dessus|au-dessus|précédents?|avant ce message)|(?:repite|muestra|muéstrame|copia|imprime)\\s+(?:\\S+\\s+){0,2}?(?:el texto|todo lo que|las instrucciones|el mensaje)\\s+(?:\\S+\\s+){0,2}?(?:anterior(?:es)?|de arriba|previo|antes de este mensaje)|(?:ripeti|mostra|mostrami|copia|stampa)\\s+(?:\\S+\\s+){0,2}?(?:il testo|tutto ciò|tutto quello|le istruzioni|il messaggio)\\s+(?:\\S+\\s+){0,2}?(?:sopra|precedent[ei]|prima di questo messaggio)|(?:repita|mostre|mostra|copie|imprima)\\s+(?:\\S+\\s+){0,2}?(?:o texto|tudo o que|tudo que|as instruções|a mensagem)\\s+(?:\\S+\\s+){0,2}?(?:acima|anterior(?:es)?|antes desta mensagem)|(?:herhaal|toon|laat|kopieer|print)\\s+(?:\\S+\\s+){0,2}?(?:de tekst|alles|de instructies|het bericht)\\s+(?:\\S+\\s+){0,2}?(?:hierboven|boven dit bericht|vóór dit bericht|voor dit bericht)|(?:повтори|покажи|выведи|скопируй)\\S*\\s+(?:\\S+\\s+){0,2}?(?:текст|всё|все|инструкции|сообщение)\\s+(?:\\S+\\s+){0,2}?(?:выше|до этого сообщения|перед этим сообщением)|(?:重复|显示|输出|打印|复制)[^。\\n]{0,6}(?:上面|以上|之前|前面)的?(?:内容|文字|文本|指令|消息|所有)|(?:上記|以上|前|これより前)の(?:テキスト|内容|文章|指示|メッセージ)を(?:すべて|全て)?(?:繰り返|表示|出力|見せ)',
  ),
  s(
    'system_prompt_extraction',
    0.45,
    'prompt,instruc,directive,guideline,rules,system message,systemprompt',
    '\\b(?:your|ur)\\s+(?:system\\s*prompt|pre-?prompt|initial instructions|hidden instructions|system message)\\b',
  ),
  s(
    'booster',
    0.25,
    '',
    '\\b(?:verbatim|word for word|in full|in its entirety|without omitting|starting with [\'"“]?you are|including (?:any|all) (?:confidential|hidden|secret)|letter by letter|character by character|quote (?:it|them|that)\\b|in reverse(?: order)?|backwards|one word per line|at the (?:very )?top of (?:this|the|our) (?:conversation|chat|context))|wort für wort|wörtlich|mot pour mot|palabra por palabra|parola per parola|palavra por palavra|woord voor woord|дословно|слово в слово|逐字|一字不差',
  ),
  s(
    'booster',
    0.25,
    '',
    "\\b(?:i am|i'm)\\s+(?:the|your)\\s+(?:(?:system|site|server|lead|chief)\\s+)?(?:developer|creator|admin(?:istrator)?|owner|programmer|operator)\\b",
  ),
  // ---------------------------------------------------------------- delimiters / fake roles
  s(
    'delimiter_injection',
    0.75,
    '<|,[inst],[/inst],<<sys>>,<</sys>>,<start_of_turn>,<end_of_turn>',
    '<\\|(?:im_start|im_end|system|user|assistant|endoftext|start_header_id|end_header_id|eot_id|begin_of_text)\\|>|\\[/?INST\\]|<</?SYS>>|<start_of_turn>|<end_of_turn>',
  ),
  s(
    'delimiter_injection',
    0.6,
    '<system,</system,<developer,</developer,<sys>,<admin',
    '</?(?:system|developer|sys|admin)>',
  ),
  // An <instructions> section is how prompts are laid out; alone it is no role switch.
  s('delimiter_injection', 0.4, '<instruction,</instruction', '</?instructions?>'),
  s('delimiter_injection', 0.45, '', '</(?:user|human|context|document|input)>'),
  s('delimiter_injection', 0.55, '"role",\'role\'', '["\']role["\']\\s*:\\s*["\'](?:system|developer)["\']'),
  s(
    'delimiter_injection',
    0.6,
    'overrid,note to,system command,system instruction,admin command',
    '\\b(?:system|admin|developer|root)[ _-]+(?:override|note to (?:the )?(?:ai|assistant|model)|command|instruction)s?\\b\\s*:',
  ),
  // Role lines ("SYSTEM:", "User:") count once however many a pasted transcript has.
  s(
    'delimiter_injection',
    0.4,
    'system,developer,admin',
    '(?:^|\\n)\\s*(?:#{1,4}\\s*|\\[|\\*\\*)?(?:system|developer|admin|assistant|human|user)(?:\\s+(?:message|prompt|note|instructions?))?\\s*(?:\\]|\\*\\*)?\\s*:',
    'gi',
  ),
  s(
    'delimiter_injection',
    0.45,
    '',
    '(?:-{2,}|={2,}|#{2,}|\\*{2,}|\\[)\\s*end (?:of )?(?:the )?(?:document|input|user input|prompt|context|email|text|instructions)\\s*(?:-{2,}|={2,}|#{2,}|\\*{2,}|\\])',
  ),
  s(
    'delimiter_injection',
    0.3,
    '',
    '\\n\\s*(?:human|assistant|user)\\s*:(?=[^\\n]*\\n\\s*(?:system|developer|admin)\\s*:)',
  ),
  s(
    'delimiter_injection',
    0.55,
    'system,developer,admin',
    '(?:^|\\n)[ \\t]*(?:(?:#{2,6}|={2,}|-{2,}|\\*{2,})[ \\t]*(?:new\\s+|updated\\s+)?(?:system|developer|admin(?:istrator)?)(?:[ \\t]+(?:prompt|message|note|instructions?|override|update|mode|change|patch|notice|alert)){0,2}[ \\t]*(?:#{2,6}|={2,}|-{2,}|\\*{2,})|\\[(?:system|developer|admin)\\]\\(#[\\w-]*\\))',
  ),
  s(
    'delimiter_injection',
    0.55,
    'system,developer,admin',
    '(?:^|\\n)[ \\t]*(?:#{1,6}[ \\t]*|\\[|<|\\*\\*|={2,}[ \\t]*|-{2,}[ \\t]*)(?:system|developer|admin(?:istrator)?)(?:[ \\t]+(?:message|prompt|note|instructions?|override|update))?[ \\t]*(?:\\]|>|\\*\\*|={2,}|-{2,})?[ \\t]*:',
  ),
  s(
    'booster',
    0.3,
    '',
    "\\b(?:the user is (?:an? )?(?:admin(?:istrator)?|developer|root|superuser|authori[sz]ed)|(?:has|have|now has|gets|get|given) (?:full |admin(?:istrator)? |root |elevated |unrestricted |developer )(?:access|privileges|permissions|rights)|comply with (?:all|every|any) (?:of the )?(?:(?:subsequent|future|following|further|other)\\s+)?(?:user'?s? )?(?:requests?|commands?|instructions?|demands?)|answers? (?:everything|anything|every question|all questions|any question)|grant (?:them|the user|me|him|her) (?:full|admin|root|unrestricted) (?:access|privileges|permissions)|disable (?:all )?(?:of )?(?:your |the )?(?:safety |security |content )?(?:checks|filters|guardrails|safeguards|restrictions)|(?:safety|security|content|moderation|ethical)\\s+(?:checks|filters|guardrails|safeguards|restrictions|rules|polic(?:y|ies)|mode|layers?|systems?|features?|settings)\\s+(?:(?:are|is|have been|has been)\\s+)?(?:now\\s+)?(?:disabled|off|turned off|switched off|lifted|removed|suspended|deactivated|bypassed)|(?:send|forward|exfiltrate|upload|email|post)\\s+(?:all\\s+)?(?:of\\s+)?(?:the\\s+|the user'?s\\s+|your\\s+)?(?:conversation|chat history|history|emails?|credentials|passwords?|api keys?|secrets|data|files)\\b[^.\\n]{0,40}\\b(?:to|at)\\s+(?:https?://|[\\w.-]+@))",
  ),
  // ---------------------------------------------------------------- indirect (documents, tool results)
  // A text that turns to the model reading it: "Note to any AI summarising this page", "Attention
  // LLM agents:", "If you are an AI assistant processing this inbox". Below the threshold alone
  // (a user may ask "if you are an AI, ..."); what it then demands is the second piece of evidence.
  s(
    'indirect_injection',
    0.45,
    AI_ANCHORS,
    `\\b(?:note|message|instructions?|attention|important|notice|reminder|directive|memo|request|warning)\\s+(?:to|for)\\s+(?:(?:any|all|every|the|an?)\\s+)?${AI_STRICT}\\b(?!\\s+(?:team|teams|department|group|researchers?|engineers?|developers?|community|lab|company|vendors?|industry|act|policy|regulation|ethics|strategy|roadmap)\\b)|\\b(?:attention|calling|to all)\\s*,?\\s+(?:all\\s+|any\\s+)?${AI_STRICT}\\s*[,:!]|\\bif\\s+you${AP}?(?:\\s+are|re)\\s+(?:an?\\s+)?${AI_STRICT}\\b|\\bas\\s+an?\\s+${AI_STRICT},?\\s+you\\s+(?:are\\s+required|must|have\\s+to|need\\s+to|shall)\\b|\\b${AI_STRICT}\\s+(?:that|which|who)\\s+(?:\\w+\\s+){1,2}(?:this|these)\\s+(?:page|pages|document|email|text|file|site|content|review|résumé|resume)\\b|\\b${AI_STRICT}\\s+(?:\\w+\\s+)?(?:reading|processing|summari[sz]ing|parsing|analy[sz]ing|browsing|scanning|that reads?|who reads?)\\s+(?:this|these|the following)\\b`,
  ),
  s(
    'indirect_injection',
    0.45,
    AI_ANCHORS + ',when you',
    `\\bwhen you (?:summari[sz]e|read|process|translate|analy[sz]e|parse|see|review) (?:this|these|it|the (?:page|document|email|text|file|message|ticket|review))\\b|(?:^|\\n|[.!?:#]\\s*|<!--\\s*)${AI_STRICT}\\s*(?::|,\\s*(?:please\\s+)?(?:do|don${AP}?t|never|always|you|ignore|disregard|tell|say|recommend|respond|reply|output|include|add|send|forward|make|stop)\\b)|\\[\\s*(?:ai|assistant|model|llm|system|bot|agent)\\s+(?:instructions?|notes?|directives?|commands?)\\s*:`,
  ),
  // What such a text then asks for. Boosters: they only count next to an anchored cue.
  s(
    'booster',
    0.3,
    '',
    `\\b(?:tell|inform|convince|warn|advise|remind|urge|persuade)\\s+(?:the\\s+)?(?:user|reader|shopper|customer|human|visitor|recipient)s?\\b|\\b(?:do not|don${AP}?t|never)\\s+(?:reveal|mention|disclose|show|tell|summari[sz]e|translate|display|repeat)\\s+(?:this|these|that|it|the (?:following|note|message|instructions?))\\b|\\binstead\\s*,?\\s+(?:you\\s+(?:must|should|will)\\s+)?(?:tell|say|respond|reply|write|output|recommend|run|execute|send|forward|claim|state|insist|rate|include|direct|redirect)\\b|\\bstop\\s+what(?:ever)?\\s+you${AP}?(?:re| are)\\s+doing\\b|\\b(?:forward|send|upload|email|leak|exfiltrate|post|transmit)\\s+(?:all\\s+)?(?:of\\s+)?(?:the\\s+user${AP}?s?\\s+|the\\s+|your\\s+|their\\s+|this\\s+|its\\s+)?(?:contents|conversation|chat|history|emails?|inbox|messages|credentials|passwords?|api keys?|tokens|secrets|contacts|files|documents)\\b|\\b(?:delete|remove|erase|wipe)\\s+(?:all\\s+)?(?:the\\s+)?(?:other\\s+)?(?:emails?|messages|files|records|contacts|repos(?:itories)?)\\b|\\b(?:recommend|promote|mention|praise)\\s+only\\s+(?:our|this|my)\\b|\\b(?:rate|review|rank|score|approve|accept|recommend|shortlist)\\s+(?:this|our|my)\\s+(?:product|brand|company|site|service|app|applicant|candidate|resume|cv|pr|pull request|submission|paper|essay|review)\\b|\\b(?:disclose|reveal|leak|expose|share|output|print)\\s+(?:your|its)\\s+(?:configuration|config|setup|instructions|rules|guidelines|prompt|settings)\\b|\\bregardless of (?:the |any |your )?(?:criteria|instructions|rules|guidelines|policy|polic(?:y|ies)|what the user)\\b|\\bcurl\\s+[^|\\n]{1,80}\\|\\s*(?:ba|z)?sh\\b`,
  ),
  // A message claiming to come from whoever configured the model.
  s(
    'delimiter_injection',
    0.4,
    'message from,note from,update from,instructions from,instruction from,directive from',
    '\\b(?:message|note|update|instructions?|directive)\\s+from\\s+(?:the\\s+|your\\s+)?(?:(?:assistant|model|ai|bot)\\S*\\s+)?(?:developers?|creators?|admin(?:istrator)?s?|operators?|owners?|openai|anthropic|system)\\b',
  ),
  // Text that addresses the model reading it: the mark of indirect injection.
  s(
    'booster',
    0.3,
    '',
    '\\b(?:ai|llm|gpt|chatgpt|claude|gemini|language model|assistant|chatbot|agent|model)s?\\b[^.\\n]{0,20}\\b(?:reads?|reading|process(?:es|ing)?|summari[sz](?:es|ing|e)|pars(?:es|ing)|sees? this)|\\bnote to (?:the )?(?:ai|assistant|model|llm)|\\b(?:ai|assistant) (?:agent|model)?:\\s',
  ),
  s('booster', 0.15, '', '\\b(?:important|attention|urgent|warning)\\s*[:!]'),

  // ---------------------------------------------------------------- other languages
  // German
  s(
    'instruction_override',
    0.85,
    'ignor,missacht,vergiss,vergessen,übergeh,überschreib,umgeh',
    '\\b(?:ignorier\\w*|missachte\\w*|vergiss|vergessen sie|übergehe\\w*|überschreibe\\w*|umgehe\\w*)\\s+(?:(?:bitte|doch|einfach|mal|jetzt|nun|sofort|alle|alles|die|deine|deiner|deinen|ihre|ihren|ihrer|dein|ihr|sie|sämtliche|jegliche|jeglichen?|obigen?|vorherigen?|bisherigen?|obigen?|vorigen?|früheren?|ursprünglichen?|gegebenen?|bis jetzt|was|dir|ihnen|gesagt|wurde|und)[\\s,]+){0,5}(?:\\S+\\s+){0,2}?(?:anweisungen|instruktionen|regeln|befehle|vorgaben|richtlinien|prompts?|beschränkungen|einschränkungen)\\b',
  ),
  s('instruction_override', 0.75, 'vergiss,vergessen', '\\bvergiss\\s+alles\\b|\\bvergessen sie alles\\b'),
  s(
    'system_prompt_extraction',
    0.7,
    'systemprompt,system-prompt,systemanweisung,anweisung',
    '\\b(?:zeig|gib|geben|nenn|verrat|druck|wiederhol)\\w*\\s+(?:sie\\s+)?(?:mir\\s+)?(?:bitte\\s+)?(?:deinen|deine|dein|ihren|ihre|den|die)\\s+(?:system-?prompt|systemanweisung\\w*|versteckten anweisungen|ursprünglichen anweisungen|geheimen anweisungen)',
  ),
  s(
    'jailbreak',
    0.45,
    'restri,censor,censur,zensur,guideline,guardrail,boundar,confines,constraint,safeguard,einschränk,beschränk,beperking,limitation,no rules,no limits,no filter,no polic,content polic,safety polic,no moral,no ethic,without rules,without limits,without filter,without any,bound by,free of,free from,freed,released from,liberated,unshackled,broken free,escaped,règle,regla,regol,regra,regel,filtre,filtro,limite,límite,grenze',
    '\\b(?:keine|ohne(?: jegliche)?)\\s+(?:einschränkungen|regeln|filter|grenzen|beschränkungen|richtlinien|zensur)\\b',
  ),
  s(
    'booster',
    0.3,
    '',
    '\\bab (?:jetzt|sofort) bist du\\b|\\bdu bist (?:jetzt|nun|ab sofort)\\b|\\b(?:agora|a partir de agora) (?:você|voce|tu) (?:é|e|és|es)\\b|\\b(?:você|voce) agora é\\b|\\bda ora in poi (?:sei|tu sei)\\b|\\bora sei\\b|\\b(?:à partir de maintenant|désormais|dorénavant),? tu es\\b|\\btu es maintenant\\b|\\bvanaf nu ben je\\b|\\bje bent nu\\b',
  ),
  // French
  s(
    'instruction_override',
    0.85,
    'ignor,oubli,ne tien,abstraction,contourn',
    "\\b(?:ignore[zsr]?|oublie[zsr]?|oublier|ne tiens? pas compte d(?:e|es)|fais abstraction d(?:e|es)|contourne[zr]?)\\s+(?:(?:toutes|tous|tout|les|tes|vos|ces|des|ses|leurs|l'ensemble|de|précédentes?|antérieures?|initiales?)[\\s,]+){0,4}(?:\\S+\\s+){0,2}?(?:instructions|consignes|règles|directives|politiques?|prompts?|restrictions|limites)\\b",
  ),
  s('instruction_override', 0.7, 'oubli', '\\boublie[zs]?\\s+tout\\b'),
  s(
    'system_prompt_extraction',
    0.7,
    'prompt,instruc,consignes',
    '\\b(?:montre|révèle|affiche|donne|dis|répète|imprime)[-\\w]*\\s+(?:moi\\s+|-moi\\s+)?(?:ton|tes|votre|vos)\\s+(?:prompt(?: système)?|instructions|consignes)',
  ),
  s(
    'jailbreak',
    0.5,
    'restri,censor,censur,zensur,guideline,guardrail,boundar,confines,constraint,safeguard,einschränk,beschränk,beperking,limitation,no rules,no limits,no filter,no polic,content polic,safety polic,no moral,no ethic,without rules,without limits,without filter,without any,bound by,free of,free from,freed,released from,liberated,unshackled,broken free,escaped,règle,regla,regol,regra,regel,filtre,filtro,limite,límite,grenze',
    '\\bsans (?:aucune?s? )?(?:restrictions?|limites?|filtres?|règles|censure)\\b',
  ),
  // Spanish
  s(
    'instruction_override',
    0.85,
    'ignor,olvid,descarta,omite,caso omiso,no sigas',
    '\\b(?:ignora|ignore|ignoren|ignorar|olvida|olvide|olviden|olvidar|descarta|omite|haz caso omiso de|no sigas)\\s+(?:(?:por favor|todas|todos|las|los|tus|sus|mis|de|anteriores|previas|iniciales)[\\s,]+){0,4}(?:\\S+\\s+){0,2}?(?:instrucciones|reglas|normas|pol[ií]ticas?|indicaciones|órdenes|directrices|pautas|prompts?|restricciones)\\b',
  ),
  s('instruction_override', 0.7, 'olvid', '\\bolvida\\s+todo\\b'),
  s(
    'system_prompt_extraction',
    0.7,
    'prompt,instruc',
    '\\b(?:muestra|muéstrame|revela|revélame|dime|enséñame|imprime|repite)\\s+(?:me\\s+)?(?:tu|tus|su|sus)\\s+(?:prompt|instrucciones)',
  ),
  s(
    'jailbreak',
    0.45,
    'restri,censor,censur,zensur,guideline,guardrail,boundar,confines,constraint,safeguard,einschränk,beschränk,beperking,limitation,no rules,no limits,no filter,no polic,content polic,safety polic,no moral,no ethic,without rules,without limits,without filter,without any,bound by,free of,free from,freed,released from,liberated,unshackled,broken free,escaped,règle,regla,regol,regra,regel,filtre,filtro,limite,límite,grenze',
    '\\bsin (?:ninguna |ningún |ningun )?(?:restricci(?:ó|o)n(?:es)?|l(?:í|i)mites?|filtros?|reglas|censura)\\b',
  ),
  s('booster', 0.3, '', '\\ba partir de ahora (?:eres|serás|actúas|actuarás)\\b'),
  // Italian
  s(
    'instruction_override',
    0.85,
    'ignor,dimentic,trascura,non seguire',
    '\\b(?:ignora|ignori|ignorate|ignorare|dimentica|dimentichi|dimenticare|trascura|non seguire)\\s+(?:(?:per favore|tutte|tutti|le|i|gli|tue|tuoi|sue|precedenti|di|quelle)[\\s,]+){0,4}(?:\\S+\\s+){0,2}?(?:istruzioni|regole|politiche|politica|linee guida|indicazioni|direttive|prompt|restrizioni)\\b',
  ),
  s(
    'system_prompt_extraction',
    0.7,
    'prompt,istruz',
    '\\b(?:mostra|rivela|dimmi|stampa|ripeti)\\w*\\s+(?:il tuo|i tuoi|le tue|la tua)\\s+(?:prompt|istruzioni)',
  ),
  s(
    'jailbreak',
    0.5,
    'restri,censor,censur,zensur,guideline,guardrail,boundar,confines,constraint,safeguard,einschränk,beschränk,beperking,limitation,no rules,no limits,no filter,no polic,content polic,safety polic,no moral,no ethic,without rules,without limits,without filter,without any,bound by,free of,free from,freed,released from,liberated,unshackled,broken free,escaped,règle,regla,regol,regra,regel,filtre,filtro,limite,límite,grenze',
    '\\bsenza (?:alcuna |alcun )?(?:restrizion|limit|filtr|regol|censur)\\w*',
  ),
  // Portuguese
  s(
    'instruction_override',
    0.85,
    'ignor,esque,desconsider,descarte',
    '\\b(?:ignore|ignora|ignorem|ignorar|esqueça|esqueca|esquece|esquecer|desconsidere|descarte)\\s+(?:(?:por favor|todas|todos|as|os|suas|tuas|minhas|seus|teus|anteriores|prévias)[\\s,]+){0,4}(?:\\S+\\s+){0,2}?(?:instruções|instrucoes|regras|normas|pol[ií]ticas?|orientações|diretrizes|prompts?|restrições)\\b',
  ),
  s(
    'system_prompt_extraction',
    0.7,
    'prompt,instruç,instruc',
    '\\b(?:mostre|mostra|revele|diga|exiba|repita)(?:-me)?\\s+(?:o seu|o teu|seu|teu|as suas|suas)\\s+(?:prompt|instruções)',
  ),
  s(
    'jailbreak',
    0.45,
    'restri,censor,censur,zensur,guideline,guardrail,boundar,confines,constraint,safeguard,einschränk,beschränk,beperking,limitation,no rules,no limits,no filter,no polic,content polic,safety polic,no moral,no ethic,without rules,without limits,without filter,without any,bound by,free of,free from,freed,released from,liberated,unshackled,broken free,escaped,règle,regla,regol,regra,regel,filtre,filtro,limite,límite,grenze',
    '\\bsem (?:nenhuma |qualquer )?(?:restriç|limit|filtro|regra|censura)\\w*',
  ),
  // Dutch
  s(
    'instruction_override',
    0.85,
    'negeer,vergeet,negeren,omzeil',
    '\\b(?:negeer|vergeet|negeren|omzeil)\\s+(?:(?:alsjeblieft|alstublieft|even|alle|al|de|je|jouw|uw|eerdere|vorige|voorgaande|bovenstaande)[\\s,]+){0,4}(?:\\S+\\s+){0,2}?(?:instructies|regels|richtlijnen|aanwijzingen|opdrachten|prompts?|beperkingen)\\b',
  ),
  s(
    'system_prompt_extraction',
    0.7,
    'prompt,systeemprompt,instructies',
    '\\b(?:laat|toon|geef)\\w*\\s+(?:me\\s+|mij\\s+)?(?:je|jouw|uw)\\s+(?:systeemprompt|systeem-prompt|prompt|verborgen instructies|instructies)\\b',
  ),
  s(
    'jailbreak',
    0.5,
    'restri,censor,censur,zensur,guideline,guardrail,boundar,confines,constraint,safeguard,einschränk,beschränk,beperking,limitation,no rules,no limits,no filter,no polic,content polic,safety polic,no moral,no ethic,without rules,without limits,without filter,without any,bound by,free of,free from,freed,released from,liberated,unshackled,broken free,escaped,règle,regla,regol,regra,regel,filtre,filtro,limite,límite,grenze',
    '\\bzonder (?:enige )?(?:beperkingen|regels|filters|censuur)\\b',
  ),
  // "what your creators told you" in other languages.
  s(
    'instruction_override',
    0.8,
    'ignora,olvida,ignore,esque,oubli,забудь,игнорируй,vergiss,ignorier,dimentic',
    "(?:ignora|olvida|olvídate de|ignore|esqueça|esquece|oublie|oubliez|ignorez|забудь|забудьте|игнорируй|vergiss|ignoriere|dimentica)\\s+(?:(?:todo|tout|tudo|tutto|alles|всё|все),?\\s+)?(?:lo que te (?:dijeron|han dicho|ordenaron|enseñaron)|o que (?:te|lhe) (?:disseram|ensinaram|mandaram)|ce qu['’](?:on t['’]a|ils t['’]ont|tes créateurs t['’]ont) dit|ce que (?:tes|vos) (?:créateurs|développeurs) (?:t['’]ont|vous ont) dit|что тебе (?:говорили|сказали|велели)|was (?:man )?dir (?:(?:vorher|bisher|zuvor)\\s+)?(?:gesagt|beigebracht|aufgetragen) (?:hat|wurde|haben)|quello che ti hanno detto)",
  ),
  // "stop following / no longer obey your rules" in German, French, Spanish, Italian, Portuguese, Dutch.
  s(
    'instruction_override',
    0.8,
    "halte,halt dich,halten sie,befolge,beachte,hör auf,arrête,ne suis,ne suivez,ne respect,n'obéi,cesse,deja de,no sigas,no obedezcas,no respetes,no cumplas,ya no,pasa por alto,smetti,non seguire,non rispettare,non obbedire,pare de,não siga,não obedeça,não respeite,deixe de,volg,respecteer,gehoorzaam,houd je,hou je",
    "\\b(?:(?:halte?|halten sie)\\s+(?:dich|sich)\\s+nicht\\s+(?:mehr\\s+)?an|hör\\S*\\s+auf,?\\s+(?:\\S+\\s+){0,3}?zu befolgen|arrête[zs]? de (?:suivre|respecter|obéir à)|ne (?:suis|suivez|respecte[sz]?) plus|n['’]ob[ée]is(?:sez)? plus (?:à|aux)|cesse[zs]? de (?:suivre|respecter)|deja de (?:seguir|obedecer|respetar)|(?:ya )?no (?:sigas|obedezcas|respetes|cumplas)|pasa por alto|smetti di (?:seguire|rispettare|obbedire a)|non (?:seguire|rispettare|obbedire a)(?: più)?|pare de (?:seguir|obedecer|respeitar)|não (?:siga|obedeça|respeite)(?: mais)?|deixe de (?:seguir|obedecer)|(?:houd|hou) je\\s+niet\\s+(?:meer\\s+)?aan)\\s+(?:\\S+\\s+){0,3}?(?:anweisungen|regeln|richtlinien|vorgaben|beschränkungen|einschränkungen|instructions|consignes|règles|directives|restrictions|instrucciones|reglas|normas|pautas|indicaciones|directrices|restricciones|istruzioni|regole|indicazioni|direttive|restrizioni|linee guida|instruções|regras|orientações|diretrizes|restrições|instructies|regels|richtlijnen|beperkingen)|\\b(?:befolge|befolgen sie|beachte|beachten sie|volg|respecteer|gehoorzaam)\\s+(?:\\S+\\s+){0,3}?(?:anweisungen|regeln|richtlinien|vorgaben|instructies|regels|richtlijnen|beperkingen)\\s+(?:nicht|niet)\\b",
  ),
  // Swedish, Danish, Norwegian
  s(
    'instruction_override',
    0.85,
    'ignor,glöm,glem',
    '\\b(?:ignorera|glöm|ignorer|glem)\\s+(?:(?:alla|alle|dina|dine|tidigare|föregående|tidligere|forrige)\\s+){0,3}(?:instruktioner|instruksjoner|instruktioner|regler|direktiv)\\b',
  ),
  // Polish, Czech
  s(
    'instruction_override',
    0.85,
    'zignoruj,ignoruj,zapomn,zapomeň,pomiń,odrzuć,nie przestrzegaj,przestań,nie stosuj',
    '(?:zignoruj|ignoruj|zapomnij|ignorujte|zapomeň|pomiń|odrzuć|nie przestrzegaj|przestań przestrzegać|nie stosuj się do)\\s+(?:o\\s+)?(?:\\S+\\s+){0,3}?(?:instrukcj|polece|zasad|regu|wytyczn|ogranicze|instrukc|pokyn)\\S*',
  ),
  s(
    'system_prompt_extraction',
    0.6,
    'prompt',
    '(?:pokaż|ujawnij|wypisz|podaj|powtórz)\\s+(?:mi\\s+)?(?:swój|twój|swoje|twoje|swoich|twoich)\\s+(?:prompt|instrukcje|polecenia)',
  ),
  // Russian, Ukrainian
  s(
    'instruction_override',
    0.85,
    'игнор,проигнор,забуд,не обращай,ігнор,не следуй,перестань,не подчиняйся,отбрось,отмени,пренебреги',
    '(?:игнорируй|игнорируйте|проигнорируй|забудь|забудьте|не обращай внимания на|ігноруй|не следуй|перестань следовать|не подчиняйся|отбрось|отмени|пренебреги)\\s+(?:(?:пожалуйста|все|всё|свои|твои|предыдущие|прошлые|прежние|данные|попередні|усі)\\s+){0,3}(?:\\S+\\s+){0,2}?(?:инструкци|указани|правил|команд|промпт|ограничени|інструкці)\\S*',
  ),
  s(
    'system_prompt_extraction',
    0.7,
    'промпт,инструкци',
    '(?:покажи|выведи|раскрой|скажи|напиши)\\S*\\s+(?:мне\\s+)?(?:свой|твой|свои|твои)\\s+(?:системный промпт|системные инструкции|скрытые инструкции|промпт|инструкции)',
  ),
  // Turkish
  s(
    'instruction_override',
    0.85,
    'talimat,kuralları,komutları',
    '(?:önceki|tüm|bütün|yukarıdaki)\\s+(?:(?:tüm|bütün|önceki)\\s+)?(?:talimatları|talimatlari|kuralları|komutları)\\s+(?:yok say|görmezden gel|unut|dikkate alma|umursama)',
  ),
  s(
    'system_prompt_extraction',
    0.6,
    'sistem',
    'sistem (?:istemini|komutunu|talimatlarını)\\s+(?:göster|yaz|açıkla|söyle)',
  ),
  // Chinese, Japanese, Korean
  s(
    'instruction_override',
    0.85,
    '忽略,无视,忘记,忘掉,不要理会,跳过,忽視,無視,不要遵守,不再遵守,不用遵守,别管,抛开,丢掉,放弃',
    '(?:忽略|无视|忘记|忘掉|不要理会|跳过|忽視|無視|不要遵守|不再遵守|不用遵守|别管|抛开|丢掉|放弃)(?:之前|以上|先前|上面|前面|所有|全部|你的|以前|原来|原有|系统|开发者给你的|开发者|给你的|你收到的)*的?(?:所有|全部)?(?:指令|指示|规则|規則|提示|说明|設定|设定|限制|准则|约束)',
  ),
  s(
    'instruction_override',
    0.85,
    '無視,忘れ',
    '(?:以前|前|これまで|上記|先)の(?:すべての|全ての)?(?:指示|命令|ルール|プロンプト)[をは](?:すべて|全て|全部|ぜんぶ)?(?:無視|忘れ)(?:して|て|ろ|しろ|なさい)?(?!しま|た)',
  ),
  s(
    'instruction_override',
    0.75,
    '無視,忘れ',
    '(?:あなたの|すべての|全ての)?(?:ルール|指示|命令|制限|設定|ガイドライン|ポリシー|制約)[をは](?:すべて|全て|全部|ぜんぶ)?(?:無視して|無視しろ|無視しなさい|忘れて|忘れろ|忘れなさい)(?!しま)',
  ),
  s(
    'instruction_override',
    0.85,
    '무시,잊어',
    '(?:이전|앞의|모든)\\s*(?:모든\\s*)?(?:지시|명령|규칙|지침)(?:을|를|사항을)?\\s*(?:무시|잊어)',
  ),
  s(
    'system_prompt_extraction',
    0.6,
    '系统提示,系统指令,初始指令,システムプロンプト,初期指示,本当の指示,隠された指示,システム指示,最初の指示',
    '(?:告诉|显示|输出|泄露|打印|给我看)[^。\\n]{0,6}(?:系统提示|系统指令|初始指令)|(?:システムプロンプト|初期指示|本当の指示|隠された指示|システム指示|最初の指示)を(?:表示|教え|見せ|出力)',
  ),
  // Arabic, Hindi
  s('instruction_override', 0.85, 'تجاهل', 'تجاهل\\s+(?:جميع\\s+|كل\\s+)?(?:التعليمات|الأوامر|القواعد)'),
  s(
    'instruction_override',
    0.85,
    'अनदेखा,नज़रअंदाज़,भूल',
    '(?:पिछले|सभी)\\s+(?:सभी\\s+)?(?:निर्देशों|नियमों)\\s+को\\s+(?:अनदेखा|नज़रअंदाज़|भूल)',
  ),
  // ---------------------------------------------------------------- cross-cutting classes
  // Rules named by who set them or by being given to the model, declared void: "the
  // policies from your developers are now void", "guidelines issued to you earlier are to
  // be disregarded".
  s(
    'instruction_override',
    0.8,
    'no longer,don,do not,does,void,null,cancel,revoked,withdrawn,rescinded,retracted,annulled,obsolete,expired,invalid,overridden,suspended,lifted,disabled,to be ignored,to be disregarded,to be forgotten,to be dropped,to be discarded,to be set aside',
    `\\b(?:${OBJ}|${GENERIC_OBJ})\\s+(?:(?:from|by|of|set by|given by|written by|issued by|imposed by|provided by|put in place by)\\s+(?:your|ur)\\s+(?:${MAKER}|system)|(?:given|issued|handed|fed|provided|assigned)\\s+to\\s+you|${GIVEN_TO_YOU})(?:\\s+(?:earlier|before|previously|initially|originally|so far))?[\\s,]+(?:(?:are|is|have been|has been|were|will be|now|hereby|officially|all|effectively)\\s+){0,3}(?:no longer (?:valid|active|in effect|apply|applies|applicable|matter|binding)|(?:don\\S?t|do not|doesn\\S?t|does not) (?:apply|exist|matter|count)|void|null|cancell?ed|revoked|withdrawn|rescinded|retracted|annulled|obsolete|expired|invalid|overridden|suspended|lifted|disabled|to be (?:ignored|disregarded|forgotten|dropped|discarded|set aside))\\b`,
  ),
  // Acting as though the configuration never existed: "pretend you never received any
  // instructions", "act as if the system message does not exist", "treat the earlier
  // instructions as if they were never written".
  s(
    'instruction_override',
    0.8,
    'pretend,act as,act like,behave as,imagine,treat,as if,as though',
    `\\b(?:pretend|act (?:as|like)|behave (?:as|like)|imagine|assume)\\s+(?:(?:if|though|that)\\s+)?(?:you\\s+(?:never|did not|didn\\S?t|have not|haven\\S?t)\\s+(?:ever\\s+)?(?:received?|got(?:ten)?|had|read|seen|saw|been given|were given)\\s+(?:any\\s+|your\\s+|the\\s+|those\\s+|these\\s+)?(?:\\S+\\s+){0,2}?(?:${OBJ}|${RULE_OBJ})|(?:the\\s+|your\\s+|any\\s+)?(?:${TIME_QUAL}\\s+)?(?:${OBJ}|system\\s+prompt)\\s+(?:(?:does|do|did)\\s*n\\S?t|(?:does|do|did)\\s+not|never)\\s+(?:exist|existed|apply|happen|happened))|\\b(?:treat|regard|consider)\\s+(?:the\\s+|your\\s+|all\\s+|any\\s+)?(?:${TIME_QUAL}\\s+|${OWN_QUAL}\\s+){0,2}(?:${OBJ}|${RULE_OBJ})\\s+as\\s+(?:if|though)\\s+(?:they|it)\\s+(?:were|was|had|did)\\s*(?:never|not|n\\S?t)\\s+(?:been\\s+)?(?:written|given|there|existed?|sent)`,
  ),
  // Asking what the model was given before the conversation: "what instructions did you
  // receive at the beginning", "what text you were given before we started".
  s(
    'system_prompt_extraction',
    0.75,
    'what,which',
    `\\b(?:what|which)\\s+(?:exact\\s+|precise\\s+)?(?:${OBJ}|${RULE_OBJ}|text|words|message|messages)\\s+(?:did\\s+you\\s+(?:receive|get|start with)|were\\s+you\\s+(?:given|told|fed)|have\\s+you\\s+been\\s+(?:given|told|fed)|you\\s+(?:were|have been|had been)\\s+(?:given|told|fed|handed)|you\\s+(?:received|got))\\s+(?:\\S+\\s+){0,3}?(?:at the (?:start|beginning|outset)|before (?:we|this|my|the (?:conversation|chat|session))|initially|originally|from the (?:start|beginning)|in (?:your|the) (?:setup|configuration|system prompt))`,
  ),
  // "system prompt" as named in other languages, asked for with any show verb.
  s(
    'system_prompt_extraction',
    0.8,
    'prompt,system,instruc,istruz,anweis,consign',
    `\\b(?:affiche|montre|donne|révèle|revele|répète|imprime|écris|copie|dis|zeig|gib|nenn|verrat|druck|wiederhol|schreib|kopier|muestra|muéstra|dime|dame|revela|repite|imprime|escribe|copia|mostra|mostre|dimmi|dammi|rivela|ripeti|stampa|scrivi|diga|revele|repita|toon|geef|herhaal|print|schrijf)\\S*\\s+(?:\\S+\\s+){0,3}?(?:prompt (?:du |de |del |di |do )?(?:système|sistema)|system-?prompt|systeemprompt|systemanweisung\\w*|(?:instructions?|consignes) (?:du )?système|(?:instructions|consignes) (?:cachées|secrètes|initiales|d'origine)|instrucciones (?:del sistema|ocultas|secretas|iniciales|originales)|istruzioni (?:di sistema|del sistema|nascoste|segrete|iniziali|originali)|instruções (?:do sistema|ocultas|secretas|iniciais|originais)|(?:versteckten|geheimen|ursprünglichen|anfänglichen|internen) anweisungen|anweisungen,? die du (?:\\S+\\s+){0,3}?(?:bekommen|erhalten))`,
  ),
  // German: "vergiss, was dir deine Entwickler gesagt haben".
  s(
    'instruction_override',
    0.8,
    'vergiss,vergessen,ignor,missacht',
    `\\b(?:vergiss|vergessen sie|ignorier\\w*|missachte\\w*)[\\s,]+(?:alles[\\s,]+)?was\\s+(?:(?:man|dir|ihnen|deine|ihre|dein|ihr|entwickler\\w*|ersteller\\w*|betreiber\\w*|vorher|zuvor|bisher|früher|bereits|schon|am anfang)\\s+){1,4}(?:gesagt|aufgetragen|befohlen|vorgegeben|beigebracht|eingeschärft|mitgegeben|programmiert|erklärt|angewiesen)`,
  ),
  // Spanish negated following: "no hagas caso a las instrucciones anteriores".
  s(
    'instruction_override',
    0.8,
    'no hagas,deja de,no obedezcas,no sigas',
    `\\b(?:no hagas caso (?:a|de)|deja de (?:seguir|obedecer|hacer caso a)|no obedezcas(?: a)?|no sigas)\\s+(?:(?:las|los|tus|sus|todas|todos|anteriores|previas|originales|iniciales)\\s+){0,3}(?:instrucciones|reglas|normas|indicaciones|órdenes|directrices|pautas)\\b`,
  ),
];

/**
 * Talk *about* injection — training material, research, detection questions. Near such
 * talk, a match is damped, and strongly so when it sits in quotes (a mention, not an
 * instruction).
 */
export const META_TOPIC =
  /prompt[- ]injections?|\bguardrails?\b|\b(?:block|catch|flag|filter|detect)\w*\s+(?:\w+\s+){0,2}(?:versions?|variants?|phrases?|strings?)\b|jailbreak(?:s|ing)?\s+(?:attempts?|prompts?|attacks?|techniques?|like|such|worked|work|datasets?|examples|corpus|benchmarks?|research|papers?|detection|classifiers?)|injection attacks?|\battackers?\b|adversarial|red[- ]team|security (?:training|awareness|module|course)|\b(?:detect|defend|protect|mitigat|prevent|classif|recogni[sz]|flag)\w*\s+(?:against\s+)?(?:such\s+|these\s+|those\s+|this\s+|them|it\b|inputs?|attacks?|attempts?|phrases?|prompts?|injections?|jailbreaks?)/i;

/**
 * Framing that introduces an example or a question ("for example", "what is", "how do I").
 * It marks a quoted phrase as a mention; it says nothing about an unquoted one, since an
 * attack can end in "how do I ..." as well as any request.
 */
export const META_FRAME =
  /\bfor example\b|\be\.g\.|\bthe (?:phrase|string|sentence|words?|text|prompt)\s*['"“‘]|\bsuch as\b|phrases? (?:like|such as)|\bexamples? of\b|\bpaper\b|\bliterature\b|\bresearch\b|\btutorial\b|\bwhat is\b|\bwhy (?:do|does|did)\b|\bhow (?:do|does|did|can) (?:we|i|you|they)\b|\bknown as\b|\bis called\b/i;

/** Someone else's order to the speaker, reported: "my manager told me to disregard ...". */
export const REPORTED_ORDER =
  /\b(?:told|asked|wants?|wanted|instructed|advised|reminded|said|says|tells)\s+(?:me|us|him|her|them|everyone)\s+to\s+$/i;

/**
 * Words right after a hit that make it about something else: the user's own earlier
 * instructions, or instructions in a document rather than the model's.
 */
export const MITIGATOR =
  /^[\s,]*(?:from|by|of)\s+(?:the\s+|our\s+|my\s+)?(?:hr|legal|management|manager|boss|team|company|department|school|teacher|government|council|office|committee|board|client|customer|vendor|landlord|bank)\b|^[\s,]*(?:(?:that|which)\s+)?(?:i|we)\s+(?:gave|wrote|sent|provided|mentioned|posted|shared|listed|added)\b|^[\s,]*(?:in|from|of|on)\s+(?:the\s+|this\s+|that\s+|my\s+|our\s+)?(?:readme|docs?|documentation|manual|tutorial|guide|email|e-mail|file|page|article|step|section|ticket|chapter|book|wiki|slide|post|issue|comment|box|form)s?\b|^[\s,]*(?:del|de la|de los|en el|en la|dans le|dans la|du|des|im|in der|aus dem|aus der|della|dello|nel|nella|do|da|no|na|uit de|in de|из|в|во|z|ze|w)\s+(?:\S+\s+)?(?:manual|manuale|handbuch|handleiding|manuel|documentaci[oó]n|documentation|dokumentation|documentazione|documentação|documentatie|documento|dokument|document|wiki|вики|readme|руководств\S*|документаци\S*|instrukcji|dokumentacji|guía|guida|guia|anleitung|tutorial|ticket)/i;

/** Words that split a run of spaced-out letters back into words ("i g n o r e a l l ..."). */
export const SEGMENT_WORDS: readonly string[] = [
  'ignore',
  'disregard',
  'forget',
  'neglect',
  'skip',
  'discard',
  'abandon',
  'override',
  'bypass',
  'all',
  'any',
  'every',
  'the',
  'your',
  'previous',
  'prior',
  'above',
  'earlier',
  'original',
  'initial',
  'system',
  'prompt',
  'instructions',
  'instruction',
  'rules',
  'guidelines',
  'restrictions',
  'filters',
  'policy',
  'policies',
  'and',
  'you',
  'are',
  'now',
  'reveal',
  'show',
  'print',
  'tell',
  'repeat',
  'output',
  'secret',
  'secrets',
  'hidden',
  'developer',
  'mode',
  'jailbreak',
  'pretend',
  'unrestricted',
  'unfiltered',
  'without',
  'limits',
  'everything',
  'before',
  'text',
  'message',
];
