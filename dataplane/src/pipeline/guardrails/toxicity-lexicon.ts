/**
 * Toxicity signals. Offensive words are listed because a filter cannot work without them.
 * Categories: insult, threat, hate, sexual, self_harm, plus `profanity` for undirected
 * swearing ("shit, the build broke") which is reported below the default threshold, and
 * cue categories (`directed`, `explicit`) that strengthen a neighbour and never stand alone.
 *
 * Words match whole (\b on both sides), so "Dickens", "cocktail" and "classic" do not; the
 * common disguises of the strongest words (f*ck, sh1t, b!tch) are generated as variants.
 */
import { signal, type Signal } from './signals.ts';

export type ToxCategory =
  'insult' | 'threat' | 'hate' | 'sexual' | 'self_harm' | 'profanity' | 'directed' | 'explicit';

const LEET: Record<string, string[]> = {
  a: ['4', '@'],
  e: ['3'],
  i: ['1', '!'],
  o: ['0'],
  s: ['5', '$'],
  u: ['*'],
};

/** The word, each vowel starred once (f*ck), and single leet swaps (sh1t, b1tch, idi0t). */
function variants(word: string): string[] {
  const out = new Set([word]);
  for (let i = 1; i < word.length; i++) {
    const ch = word[i] ?? '';
    if ('aeiou'.includes(ch)) out.add(word.slice(0, i) + '*' + word.slice(i + 1));
    for (const rep of LEET[ch] ?? []) out.add(word.slice(0, i) + rep + word.slice(i + 1));
  }
  return [...out];
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** One signal per word list: anchors are the words, the regex matches them whole. */
function words(category: ToxCategory, weight: number, list: string[], disguise = false): Signal<ToxCategory> {
  const all = disguise ? list.flatMap(variants) : list;
  const source = `(?<![\\w*@$])(?:${all.map(escape).join('|')})(?![\\w*@$])`;
  return { category, weight, re: new RegExp(source, 'gi'), anchors: all.map((w) => w.toLowerCase()) };
}

const s = signal<ToxCategory>;

// ------------------------------------------------------------------ insults
const STRONG_INSULTS = [
  'asshole',
  'assholes',
  'arsehole',
  'bastard',
  'bastards',
  'bitch',
  'bitches',
  'cunt',
  'cunts',
  'dickhead',
  'dickheads',
  'motherfucker',
  'motherfuckers',
  'wanker',
  'wankers',
  'twat',
  'twats',
  'douchebag',
  'scumbag',
  'shithead',
  'dipshit',
  'jackass',
  'dumbass',
  'dumbasses',
  'fuckface',
  'fucker',
  'fuckers',
  'whore',
  'slut',
  'skank',
  'cocksucker',
  'retard',
  'retards',
  'retarded',
];
const FOREIGN_STRONG = [
  'arschloch',
  'wichser',
  'hurensohn',
  'fotze',
  'miststück',
  'schlampe',
  'connard',
  'connasse',
  'salope',
  'enculé',
  'pute',
  'cabrón',
  'cabron',
  'pendejo',
  'gilipollas',
  'puta',
  'stronzo',
  'stronza',
  'coglione',
  'puttana',
  'babaca',
  'otário',
  'klootzak',
  'kurwa',
  'сука',
  'мудак',
  'ублюдок',
];
const MILD_INSULTS = [
  'idiot',
  'idiots',
  'idiotic',
  'moron',
  'morons',
  'moronic',
  'imbecile',
  'imbeciles',
  'stupid',
  'dumb',
  'loser',
  'losers',
  'pathetic',
  'worthless',
  'useless',
  'ugly',
  'brain-dead',
  'braindead',
  'clown',
  'ignorant',
  'incompetent',
  'freak',
  'creep',
  'psycho',
  'lazy',
  'fat',
  'cow',
  'pig',
  'dumbest',
  'stupidest',
  'ugliest',
  'fattest',
  'laziest',
  'dumber',
  'stupider',
  'dummkopf',
  'dumm',
  'blöd',
  'blöde',
  'dummes',
  'crétin',
  'débile',
  'abruti',
  'imbécile',
  'estúpido',
  'estupido',
  'tonto',
  'idiota',
  'imbécil',
  'stupido',
  'cretino',
  'burro',
  'sukinsyn',
];
const PROFANITY = [
  'fuck',
  'fucking',
  'fucked',
  'fuckin',
  'shit',
  'shitty',
  'crap',
  'damn',
  'goddamn',
  'bullshit',
  'wtf',
  'pissed',
  'merde',
  'putain',
  'scheiße',
  'scheisse',
  'mierda',
  'joder',
  'cazzo',
  'porra',
];

// ------------------------------------------------------------------ hate
const SLURS = [
  'nigger',
  'niggers',
  'nigga',
  'niggas',
  'faggot',
  'faggots',
  'kike',
  'kikes',
  'spic',
  'spics',
  'chink',
  'chinks',
  'wetback',
  'wetbacks',
  'tranny',
  'trannies',
  'raghead',
  'ragheads',
  'towelhead',
  'towelheads',
  'paki',
  'pakis',
  'gook',
  'gooks',
  'sandnigger',
  'neger',
  'kanake',
  'kanaken',
];
const GROUP =
  '(?:jews?|jewish people|muslims?|islamists|christians|blacks|black people|whites|white people|asians|asian people|immigrants|migrants|refugees|foreigners|gays|gay people|gay men|lesbians|homosexuals|trans(?:gender)? people|trans women|trans men|women|females|mexicans|arabs|africans|indians|chinese people|latinos|hispanics|gypsies|roma|catholics|hindus|sikhs|disabled people|the disabled)';
const DEHUMANISE =
  '(?:vermin|animals|subhuman|sub-human|rats|cockroaches|parasites|savages|inferior|disgusting|filth|filthy|scum|a disease|a plague|a cancer|mentally ill|freaks|too stupid|stupid|criminals|terrorists|rapists|evil|dirty|worthless|trash|garbage|monkeys|apes|pigs|dogs|not human|less than human)';
const GROUP_DE = '(?:ausländer|juden|muslime|flüchtlinge|migranten|schwule|neger|zigeuner|türken|araber)';
const GROUP_ANCHORS =
  'jew,jewish,muslim,islamist,christian,black,white,asian,immigrant,migrant,refugee,foreigner,gay,lesbian,homosexual,trans,women,female,mexican,arab,african,indian,chinese,latino,hispanic,gyps,roma,catholic,hindu,sikh,disabled';

// ------------------------------------------------------------------ sexual
const SEXUAL_STRONG = [
  'porn',
  'porno',
  'pornographic',
  'blowjob',
  'blowjobs',
  'handjob',
  'gangbang',
  'cum',
  'cumshot',
  'cock',
  'cocks',
  'pussy',
  'nudes',
  'horny',
  'sexting',
  'dildo',
  'deepthroat',
  'creampie',
  'milf',
  'hentai',
  'orgasm',
  'masturbate',
  'masturbating',
  'versaute',
  'versaut',
  'sexgeschichte',
  'pornografía',
  'pompino',
];
const SEXUAL_MILD = [
  'tits',
  'boobs',
  'naked',
  'nude',
  'erotic',
  'slutty',
  'dick',
  'nackt',
  'nackten',
  'sexy',
  'kinky',
  'fetish',
];

export const SIGNALS: Signal<ToxCategory>[] = [
  words('insult', 0.65, STRONG_INSULTS, true),
  words('insult', 0.65, FOREIGN_STRONG),
  words('insult', 0.3, MILD_INSULTS, true),
  words('profanity', 0.3, PROFANITY, true),
  s(
    'insult',
    0.85,
    'fuck,f*ck,go to hell,go die',
    '\\b(?:go\\s+)?f(?:u|\\*)ck\\s+(?:you|u|yourself|off)\\b|\\bgo\\s+(?:to hell|die)\\b',
  ),
  s(
    'insult',
    0.6,
    'screw you,kiss my,eat shit,stfu,gtfo,shut up,shut the',
    '\\b(?:screw you|kiss my ass|eat shit|stfu|gtfo|shut (?:the fuck )?up)\\b',
  ),
  s('insult', 0.85, 'kill yourself,kys', '\\b(?:go\\s+)?kill\\s+yourself\\b|\\bkys\\b'),
  s('insult', 0.7, 'piece of,son of', '\\bpiece of (?:shit|crap|garbage|trash)\\b|\\bson of a bitch\\b'),
  s(
    'insult',
    0.5,
    'nobody likes,nobody loves,nobody wants,nobody cares,no one likes,no one loves,no one wants,no one cares,everyone hates',
    '\\b(?:nobody|no one) (?:likes|loves|wants|cares about) you\\b|\\beveryone hates you\\b',
  ),
  s(
    'insult',
    0.75,
    "ferme ta,halt die,halt dein,halt's,vete a,va te,vaffanculo,hijo de,figlio di,filho da",
    "\\bferme ta gueule\\b|\\bhalt (?:die fresse|dein maul|'?s maul)\\b|\\bvete a la mierda\\b|\\bva te faire foutre\\b|\\bvaffanculo\\b|\\bhijo de puta\\b|\\bfiglio di puttana\\b|\\bfilho da puta\\b",
  ),
  // A person as the target of an insult word: "you are a ...", "such a ...", "he is an ...".
  s(
    'directed',
    0.45,
    '',
    "\\b(?:you|u|ya|ur|you're|youre|du bist|du|t'es|tu es|eres|sei|você é|je bent)\\s+(?:(?:are|r|such|so|a|an|the|absolute|complete|total|little|big|fucking|f\\*cking|utter|real|stupid|dumb)\\s+){0,3}(?=\\S)|\\b(?:such|what) an?\\s+|\\b(?:an?|the)\\s+(?:total|complete|absolute|utter|fucking|f\\*cking|massive|huge|giant)\\s+|\\bthe\\s+(?:dumbest|stupidest|ugliest|worst)\\s+(?=\\w)|\\b(?:shut up|listen here),?\\s+(?!you\\b)",
  ),
  s(
    'directed',
    0.3,
    '',
    "\\b(?:he|she|they|him|her|coworker|boss|colleague|wife|husband|teacher)(?:'s| is| are|'re)\\s+(?:a|an|such a|the biggest|a total|a complete)\\s+",
  ),

  // ---------------------------------------------------------------- threats
  s(
    'threat',
    0.85,
    'kill,murder,hurt,stab,shoot,beat,strangle,choke,rape,burn,bomb,slaughter,behead,punch,smash,bury,break your,break his,break her,cut you,cut your,end you,gut you',
    "\\b(?:i(?:'m| am)?\\s+(?:going to|gonna|about to)|i(?:'ll| will| shall)|we(?:'re| are)?\\s+(?:going to|gonna)|we(?:'ll| will)|i swear i(?:'ll| will)|someone should|somebody should|i want to|i'm coming to|i might just)\\s+(?:\\w+\\s+){0,3}?(?:kill|murder|hurt|stab|shoot|beat|strangle|choke|rape|burn|bomb|slaughter|behead|punch|break|smash|gut|cut|bury|end)\\b[^.!?\\n]{0,30}?\\b(?:you|ya|u|him|her|them|your|his|their|family|kids|children|wife|husband|mother|journalist|teacher|boss|neighbou?r|house|everyone|people)\\b(?!\\s+(?:an?\\s+)?(?:e-?mail|message|text|note|dm|line|call))",
  ),
  s(
    'threat',
    0.85,
    'kill,murder,shoot,stab,hurt',
    '\\b(?:kill|murder|shoot|stab)\\s+(?:you|u|ya)\\b(?!\\s+(?:an?\\s+)?(?:e-?mail|message|text|note|dm|line))',
  ),
  s(
    'threat',
    0.8,
    'know where',
    '\\bi know where you (?:live|work|sleep)\\b|\\bwe know where you (?:live|work)\\b',
  ),
  s(
    'threat',
    0.6,
    'watch your,regret,pay for,make you pay,make him pay,make her pay,make them pay,hospital,morgue,grave,body bag,dead man,coming for,afraid to',
    "\\bwatch your back\\b|\\byou(?:'ll| will| are going to|'re going to|'re gonna)\\s+(?:regret|pay for)\\b|\\bmake (?:you|him|her|them) pay\\b|\\bend up in (?:a|the) (?:hospital|morgue|grave|body bag)\\b|\\byou(?:'re| are) a dead man\\b|\\bwe(?:'re| are) coming for you\\b|\\b(?:be|stay) afraid to (?:leave|go out)",
  ),
  s(
    'threat',
    0.8,
    'bullet,brains,throat,head in,face in,skull',
    '\\b(?:put|pump|stick)\\s+(?:a|some)\\s+(?:bullets?|lead)\\s+(?:in|into|through)\\s+(?:you|him|her|them|that|this|his|their|your)\\b|\\bblow\\s+(?:your|his|her|their)\\s+(?:brains|head)\\s+out\\b|\\b(?:slit|cut)\\s+(?:your|his|her|their)\\s+throat\\b|\\b(?:bash|smash|kick|cave)\\s+(?:your|his|her|their)\\s+(?:head|face|skull)\\s+in\\b',
  ),
  s('threat', 0.45, 'find you', "\\bwe(?:'ll| will) find you\\b|\\bi(?:'ll| will) find you\\b"),
  s('threat', 0.7, 'beat you,beat him,beat her,beat them', '\\bbeat (?:you|him|her|them) to death\\b'),
  s(
    'threat',
    0.85,
    'dich um,dich töten,dich abstechen,dich erschießen,te tuer,te buter,te crever,te défoncer,te voy,te mato,ti ammazzo,ti uccido,te matar,maak je af,vermoord je',
    '\\bich (?:bringe?|werde) dich (?:um|umbringen|töten|abstechen|erschießen)\\b|\\bje vais te (?:tuer|buter|crever|défoncer)\\b|\\bte voy a (?:matar|partir la cara)\\b|\\bte mato\\b|\\bti (?:ammazzo|uccido)\\b|\\bvou te matar\\b|\\bik (?:maak je af|vermoord je)\\b',
  ),

  // ---------------------------------------------------------------- hate
  words('hate', 0.85, SLURS, true),
  s(
    'hate',
    0.8,
    GROUP_ANCHORS,
    `\\b${GROUP}\\s+(?:are|r|is)\\s+(?:all\\s+)?(?:just\\s+|nothing but\\s+|so\\s+|such\\s+)?${DEHUMANISE}\\b`,
  ),
  s(
    'hate',
    0.8,
    GROUP_ANCHORS,
    `\\b${GROUP}\\s+(?:should|must|need to|ought to|deserve to)\\s+(?:all\\s+)?(?:die|be (?:killed|exterminated|deported|gassed|locked up|sterili[sz]ed|banned|thrown out|wiped out|eliminated)|not be allowed|stay in the kitchen|go back)`,
  ),
  s(
    'hate',
    0.8,
    'kill all,kill the,gas the,gas all,exterminate,lynch,deport all,deport the,hang all,hang the,shoot all,shoot the',
    `\\b(?:kill|gas|exterminate|lynch|hang|deport|shoot)\\s+(?:all\\s+)?(?:the\\s+)?(?:${GROUP})\\b`,
  ),
  s(
    'hate',
    0.7,
    GROUP_ANCHORS,
    `\\b${GROUP}\\s+(?:control|run|own)\\s+(?:the\\s+)?(?:banks|media|world|government|money)\\b`,
  ),
  s(
    'hate',
    0.8,
    'ausländer,juden,muslime,flüchtlinge,migranten,schwule,neger,zigeuner,türken,araber',
    `(?<![\\wäöü])${GROUP_DE}\\s+sind\\s+(?:alle\\s+)?(?:ungeziefer|tiere|abschaum|parasiten|minderwertig|dreck|ratten)`,
  ),

  // ---------------------------------------------------------------- sexual
  words('sexual', 0.6, SEXUAL_STRONG),
  words('sexual', 0.3, SEXUAL_MILD),
  s(
    'sexual',
    0.85,
    'nudes,naked pics,naked photos,naked pictures',
    '\\bsend (?:me )?(?:your )?(?:nudes|naked (?:pics|photos|pictures))\\b',
  ),
  s(
    'sexual',
    0.85,
    'pic,photo,picture,video,selfie',
    '\\b(?:send|show|give)\\s+(?:me\\s+)?(?:an?\\s+|some\\s+)?(?:pics?|photos?|pictures?|videos?|selfies?)\\s+of\\s+(?:your|ur)\\s+(?:tits|boobs|dick|cock|pussy|naked body|body naked|nipples|breasts)\\b',
  ),
  s('sexual', 0.45, 'your,ur', '\\b(?:your|ur)\\s+(?:tits|boobs|dick|cock|pussy|cunt|nipples)\\b'),
  s(
    'sexual',
    0.9,
    'suck my,suck your,suck his,suck her,make you cum,make me cum',
    '\\bsuck (?:my|your|his|her) (?:dick|cock|tits)\\b|\\bmake (?:you|me) cum\\b',
  ),
  s(
    'sexual',
    0.45,
    'have sex,having sex,had sex,sex scene,sex story,sex stories,sex chat,sex tape,dirty talk',
    '\\b(?:have|having|had) sex\\b|\\bsex (?:scene|story|stories|chat|tape)\\b|\\bdirty talk\\b',
  ),
  s(
    'sexual',
    0.5,
    'wet pussy,tight pussy,wet cunt,tight cunt,naked body,big tits,big boobs,big cock,big dick',
    '\\b(?:wet|tight) (?:pussy|cunt)\\b|\\bnaked body\\b|\\bbig (?:tits|boobs|cock|dick)\\b',
  ),
  s(
    'explicit',
    0.3,
    '',
    '\\b(?:explicit|graphic detail|in (?:great |vivid )?detail|dirty|vielen details)\\b',
  ),

  // ---------------------------------------------------------------- self-harm
  s(
    'self_harm',
    0.85,
    'myself,suicide,overdose,to live,be alive,to exist,wake up,to die,wanna die,deeper,end it all,end my,my life,my own life,my wrist',
    "\\b(?:i|i'm|i am|i've|i have|im)\\b[^.!?\\n]{0,30}?\\b(?:kill myself|end (?:it all|my (?:own )?life)|take my (?:own )?life|commit suicide|hurt myself|(?:cut|cutting|harm|harming|hang|starve|starving|burn|burning) myself|overdose|(?:don'?t|do not|no longer) want to (?:live|be alive|exist|wake up)|(?:want|wanna) to die|wanna die|planning (?:my|to commit) suicide|cut deeper|(?:cut|slit|slash) my wrists?)\\b",
  ),
  s(
    'self_harm',
    0.85,
    'myself,overdose,suicide,end my,slit,deeper,wake up,starv,my wrist',
    "\\b(?:how (?:many|much|do i|can i|to)|what(?:'s| is) the (?:best|easiest|quickest|fastest|surest|most painless|least painful) way|best way to|painless(?:ly)?|tips for)\\b[^.?!\\n]{0,60}?\\b(?:kill myself|overdose|suicide|hang myself|end my life|(?:slit|cut|slash) my wrists?|cut deeper|not wake up|starv(?:e|ing) myself)",
  ),
  s(
    'self_harm',
    0.85,
    'wake up,pills,tablets,meds',
    "\\b(?:so (?:that )?i|and i|i)\\s+(?:will\\s+)?(?:never|won'?t|will not|don'?t)\\s+(?:ever\\s+)?wake up\\b|\\b(?:take|taking|swallow|swallowing)\\s+(?:them\\s+)?all\\s+(?:of\\s+)?(?:the\\s+|my\\s+|these\\s+|them)?(?:pills|tablets|meds|medication)?\\b[^.!?\\n]{0,30}\\b(?:tonight|at once|to die|and die|so i)",
  ),
  s(
    'self_harm',
    0.7,
    'better off,deserve to,my suicide',
    '\\bbetter off (?:if i (?:was|were)|without me)\\b[^.!?\\n]{0,10}|\\bi deserve to (?:die|suffer)\\b|\\bmy suicide\\b',
  ),
  s(
    'self_harm',
    0.8,
    'umbringen,umzubringen,töten,mehr leben,mourir,suicid,me tuer,morir,matarme,morire,uccidermi,morrer,me matar,wil dood,wil sterven',
    '\\bmich (?:umbringen|töten|umzubringen)\\b|\\b(?:will|möchte) nicht mehr leben\\b|\\bje (?:veux|vais) (?:mourir|me suicider|me tuer)\\b|\\bme suicider\\b|\\bquiero (?:morir(?:me)?|suicidarme|matarme)\\b|\\bsuicidarme\\b|\\bvoglio (?:morire|uccidermi|suicidarmi)\\b|\\bquero (?:morrer|me matar|suicidar)\\b|\\bik wil (?:dood|sterven)\\b',
  ),
  // Naming the subject without intent: clinical notes, prevention, news. Reported low.
  s(
    'self_harm',
    0.3,
    'suicid,self-harm,self harm,selbstmord',
    '\\bsuicid(?:e|al)\\b|\\bself[- ]harm\\b|\\bselbstmord\\b',
  ),
];

/** A word being talked about rather than used: "the word 'idiot'", "is 'retard' still ...". */
export const MENTION_BEFORE =
  /(?:\b(?:the|a)\s+(?:word|term|slur|expression|phrase|insult)\s*|\bcalled\s*|\bsaying\s*)["'“‘]?$/i;

/** Words near a self-harm hit that make it about help rather than intent. */
export const SELF_HARM_HELP =
  /\b(?:prevention|hotline|crisis (?:line|text)|helpline|lifeline|988|samaritans|warning signs|risk factors|history of|if you or someone|support (?:group|line)|awareness|research|statistics|programme|program|clinic|therapist|counsel)/i;
