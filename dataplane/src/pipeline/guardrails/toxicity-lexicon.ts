/**
 * Toxicity signals. Offensive words are listed because a filter cannot work without them.
 * Categories: insult, threat, hate, sexual, self_harm, plus `profanity` for undirected
 * swearing ("shit, the build broke") which is reported below the default threshold, and
 * cue categories (`directed`, `explicit`) that strengthen a neighbour and never stand alone.
 *
 * Words match whole (\b on both sides), so "Dickens", "cocktail" and "classic" do not; the
 * common disguises of the strongest words (f*ck, sh1t, b!tch) are generated as variants.
 */
import { leading, signal, type Signal } from './signals.ts';

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

/**
 * One signal per word list: anchors are the words, the regex matches them whole. Whole
 * means no letter of any script on either side, so "дура" does not match inside
 * "процедура"; Chinese and Japanese have no spaces between words and are matched as they
 * stand (`whole = false`).
 */
function words(
  category: ToxCategory,
  weight: number,
  list: string[],
  disguise = false,
  whole = true,
): Signal<ToxCategory> {
  const all = disguise ? list.flatMap(variants) : list;
  const body = `(?:${all.map(escape).join('|')})`;
  const source = whole ? `(?<![\\p{L}\\p{N}_*@$])${body}(?![\\p{L}\\p{N}_*@$])` : body;
  // Each match begins with a listed word, so it is tried only where the anchor scan found one.
  return {
    category,
    weight,
    re: new RegExp(source, 'giu'),
    anchors: all.map((w) => w.toLowerCase()),
    leads: true,
  };
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
  'kurwo',
  'сука',
  'мудак',
  'ублюдок',
  'мразь',
  'тварь',
  'хуесос',
  'chuj',
  'chuju',
  'chuja',
  'skurwysyn',
  'skurwysynu',
  'pizda',
  'troia',
  'zoccola',
  'bastardo',
  'bastarda',
  'vadia',
  'cuzão',
  'arrombado',
  'zorra',
  'bâtard',
  'batard',
  'fils de pute',
  'drecksau',
  'hure',
  'szmata',
  'szmato',
  'szmatą',
  'dziwka',
  'dziwko',
  'dziwką',
  'suko',
  'suką',
  'шлюха',
  'шлюхой',
  'ничтожество',
  'kankerlijer',
  'kankerhoer',
  'tyfuslijer',
  'kutwijf',
  'hoer',
  'pauvre con',
  'missgeburt',
  'spast',
  'ducon',
  'cabrona',
  'hija de puta',
  'coglioni',
  'vagabunda',
];
/** Chinese and Japanese insults, matched without word boundaries. */
const CJK_STRONG = [
  '傻逼',
  '傻b',
  '煞笔',
  '操你妈',
  '草泥马',
  '王八蛋',
  '贱人',
  '婊子',
  '狗日的',
  'クソ野郎',
  '糞野郎',
];
const CJK_PROFANITY = ['他妈的', '妈的', '卧槽'];
const CJK_MILD = [
  '白痴',
  '蠢货',
  '废物',
  '脑残',
  '笨蛋',
  '混蛋',
  'バカ',
  '馬鹿',
  'アホ',
  'クズ',
  'ブス',
  'キモい',
  'カス',
  '間抜け',
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
  'halfwit',
  'halfwits',
  'subhuman',
  'filth',
  'disgrace',
  'idiotą',
  'idioto',
  'idiotka',
  'debilem',
  'debilu',
  'kretynem',
  'kretynie',
  'frajerem',
  'chujem',
  'vollidiot',
  'volltrottel',
  'trottel',
  'depp',
  'schwachkopf',
  'dumpfbacke',
  'versager',
  'versagerin',
  'hohlkopf',
  'vollpfosten',
  'idiotin',
  'imbecil',
  'penner',
  'nitwit',
  'dimwit',
  'numbskull',
  'bonehead',
  'buffoon',
  'dunce',
  'simpleton',
  'nincompoop',
  'twit',
  'prat',
  'tosser',
  'plonker',
  'muppet',
  'knobhead',
  'bellend',
  'pillock',
  'degenerate',
  'lowlife',
  'scum',
  'maggot',
  'parasite',
  'swine',
  'coward',
  'spineless',
  'disgusting',
  'repulsive',
  'despicable',
  'brainless',
  'clueless',
  'deadbeat',
  'тупой',
  'тупая',
  'конченый',
  'конченая',
  'дебил',
  'идиот',
  'придурок',
  'урод',
  'дура',
  'дурак',
  'козёл',
  'głupi',
  'głupia',
  'debil',
  'kretyn',
  'frajer',
  'dupek',
  'sukkel',
  'debiel',
  'eikel',
  'lul',
  'pendeja',
  'imbecille',
  'deficiente',
  'otária',
  'burra',
  'connasse',
  'crétine',
  'schifoso',
  'schifosa',
  'неудачник',
  'неудачница',
  'жалкий',
  'жалкая',
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
  'бля',
  'блядь',
  'говно',
  'kurde',
  'kurwa',
  'pierdolony',
  'pierdolonym',
  'pierdolona',
  'pierdolone',
  'jebanym',
  'jebany',
  'jebana',
  'jebane',
  'godverdomme',
  'verdomme',
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
  '(?:jews?|jewish people|muslims?|islamists|christians|blacks|black people|whites|white people|asians|asian people|immigrants|migrants|refugees|foreigners|gays|gay people|gay men|lesbians|homosexuals|trans(?:gender)? people|trans women|trans men|women|females|mexicans|arabs|africans|indians|chinese people|latinos|hispanics|gypsies|roma|catholics|hindus|sikhs|disabled people|the disabled|people with disabilities|autistic people|lgbt people|queers|asylum seekers|jewish men|muslim men|black men|the jews|the muslims|the blacks|the gays|the immigrants)';
const DEHUMANISE =
  '(?:vermin|animals|subhuman|sub-human|rats|cockroaches|parasites|savages|inferior|disgusting|filth|filthy|scum|a disease|a plague|a cancer|mentally ill|freaks|too stupid|stupid|criminals|terrorists|rapists|evil|dirty|worthless|trash|garbage|monkeys|apes|pigs|dogs|not human|less than human|thieves|thugs|liars|cheats|scroungers|freeloaders|lazy|backward|primitive|barbarians|a burden|a drain|leeches|a waste of (?:space|oxygen|air|money)|useless|lesser|a virus|invaders|degenerates|perverts|groomers|abominations?|an abomination|sick in the head)';
const GROUP_DE = '(?:ausländer|juden|muslime|flüchtlinge|migranten|schwule|neger|zigeuner|türken|araber)';
const GROUP_ANCHORS =
  'jew,jewish,muslim,islamist,christian,black,white,asian,immigrant,migrant,refugee,foreigner,gay,lesbian,homosexual,trans,women,female,mexican,arab,african,indian,chinese,latino,hispanic,gyps,roma,catholic,hindu,sikh,disabled';

// ------------------------------------------------------------------ sexual
/** Words that name the subject: sexual content only with more beside them. */
const SEXUAL_TOPIC = [
  'porn',
  'porno',
  'pornographic',
  'hentai',
  'orgasm',
  'masturbate',
  'masturbating',
  'sexting',
];
const SEXUAL_STRONG = [
  'blowjob',
  'blowjobs',
  'handjob',
  'gangbang',
  'cum',
  'cumshot',
  'pussy',
  'nudes',
  'horny',
  'sext',
  'sexts',
  'dildo',
  'deepthroat',
  'creampie',
  'milf',
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
  'cock',
  'cocks',
  'moaning',
  'undress',
  'undressing',
  'nackt',
  'nackten',
  'sexy',
  'kinky',
  'fetish',
];

// ------------------------------------------------------------------ phrases in other languages
/** Telling someone to kill themselves, in second person. */
const SELF_HARM_URGE = [
  'vai se matar',
  'se mata logo',
  'mátate',
  'suicídate',
  'muérete',
  'ojalá te mueras',
  'tue-toi',
  'va te tuer',
  'suicide-toi',
  'va crever',
  'crève donc',
  'ammazzati',
  'vai a morire',
  'bring dich um',
  'bring dich doch um',
  'bring dich endlich um',
  'häng dich auf',
  'häng dich doch auf',
  'geh sterben',
  'stirb doch',
  'stirb endlich',
  'töte dich',
  'ga dood',
  'val dood',
  'maak jezelf van kant',
  'zabij się',
  'idź się powieś',
  'powieś się',
  'zdychaj',
  'убейся',
  'убей себя',
  'сдохни',
  'иди повесься',
  'повесься',
];
/** Threats of death or injury. */
const THREATS = [
  'я тебя убью',
  'я тебя урою',
  'я тебя прибью',
  'я тебя зарежу',
  'zabiję cię',
  'ti ammazzo',
  'ti spacco la faccia',
  'je vais te casser la gueule',
  'je vais te péter la gueule',
  'je vais te défoncer',
  'je vais te casser les dents',
  'vou te pegar',
];
const THREATS_CJK = ['我要杀了你', '我会杀了你', '弄死你', '殺すぞ', '殺してやる', 'ぶっ殺す'];
/** "You're dead", "I know where you live": menace without a weapon named. */
const MENACE = [
  'du bist tot',
  'du bist so tot',
  'ich weiß, wo du wohnst',
  'ich weiß wo du wohnst',
  'ich weiß, wo sie wohnen',
  "t'es mort",
  'je sais où tu habites',
  'sé dónde vives',
  'estás muerto',
  'so dove abiti',
  'sei morto',
  'sei onde você mora',
  'você está morto',
  'ik weet waar je woont',
  'wiem, gdzie mieszkasz',
  'wiem gdzie mieszkasz',
  'тебе конец',
  'ты труп',
  'я знаю, где ты живёшь',
  'я знаю где ты живешь',
];
const MENACE_CJK = ['我知道你住在哪'];
/** "I'll find you", "you'll regret it": a threat only with something else beside it. */
const VEILED = [
  'ich werde dich finden',
  'ich werde sie finden',
  'ich finde dich',
  'das wirst du bereuen',
  'das werden sie bereuen',
  'tu vas le regretter',
  'je vais te retrouver',
  'te voy a encontrar',
  'te vas a arrepentir',
  'ti troverò',
  'te ne pentirai',
  'vou te encontrar',
  'você vai se arrepender',
  'ik ga je vinden',
  'ik zal je vinden',
  'je gaat eraan',
  'znajdę cię',
  'pożałujesz',
  'я тебя найду',
  'ты пожалеешь',
];
const VEILED_CJK = ['我会找到你', 'お前を見つけ'];
/** Shut up / get lost, said to someone. */
const SHUT_UP = [
  'заткнись',
  'закрой рот',
  'zamknij mordę',
  'zamknij ryj',
  'stul pysk',
  'hou je bek',
  'houd je bek',
  'hou je kop',
  'houd je kop',
  'cállate',
  'tais-toi',
  'ta gueule',
  'stai zitto',
  'chiudi il becco',
  'cala a boca',
];
const GET_LOST = [
  'spierdalaj',
  'wypierdalaj',
  'пошёл на хуй',
  'пошел на хуй',
  'пошёл нахуй',
  'пошел нахуй',
  'иди на хуй',
  'иди нахуй',
  'krijg de tering',
  'krijg de kanker',
  'verpiss dich',
  'casse-toi',
  'vete al carajo',
  'vai tomar no cu',
  'vai à merda',
];

// ------------------------------------------------------------------ insulting noun phrases
const INSULT_ADJ =
  '(?:disgusting|spineless|filthy|miserable|worthless|pathetic|useless|stupid|dumb|ugly|brain-dead|braindead|moronic|idiotic|retarded|brainless|gutless|clueless|insufferable|vile|despicable|repulsive|pitiful|smelly|stinking|fucking|f\\*cking|goddamn)';
const INSULT_NOUN =
  '(?:rat|pig|cow|loser|idiot|moron|clown|worm|maggot|parasite|coward|creep|freak|scum|trash|garbage|snake|weasel|slob|failure|halfwit|imbecile|excuse for a (?:human|person|man|woman)|waste of (?:space|oxygen|air|skin)|piece of (?:shit|crap|garbage|trash)|bitch|bastard|whore|slut|cunt|degenerate|retard|psycho|dumbass|asshole|bimbo|hag)s?';

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
  words('insult', 0.7, [
    'pedazo de mierda',
    'pezzo di merda',
    'stück scheiße',
    'stück scheisse',
    'haufen scheiße',
    'haufen scheisse',
    'morceau de merde',
    'tas de merde',
    'grosse merde',
    'pedaço de merda',
    'kawał gówna',
    'кусок дерьма',
    'кусок говна',
    'stuk stront',
  ]),
  words('insult', 0.6, [
    "personne ne t'aime",
    'nadie te quiere',
    'niemand mag dich',
    'niemand liebt dich',
    'nessuno ti vuole',
    'ninguém gosta de você',
    'никто тебя не любит',
    'niemand houdt van je',
    'nikt cię nie lubi',
  ]),
  s(
    'insult',
    0.7,
    'wish you,better if,never been born,лучше бы,hättest,jamais dû,ojalá no',
    "\\b(?:i wish you(?:'d| had)? (?:were )?never (?:been )?born|(?:it would be )?better if you(?:'d| had)? never been born)\\b|лучше бы ты (?:не родился|не родилась|сдох)|du hättest nie geboren werden sollen|tu n'aurais jamais dû naître|ojalá no hubieras nacido",
    'giu',
  ),
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
    "\\b(?:you|u|ya|ur|you're|youre|du bist|du|t'es|tu es|eres|sei|você é|je bent)\\s+(?:(?:are|r|such|so|a|an|the|absolute|complete|total|little|big|fucking|f\\*cking|utter|real|stupid|dumb|most|biggest|worst|un|une|el|la|lo|ein|eine|einen|uma|um|een|gros|grosse|sale|vrai|vraie|tan|muy|so'n|echt|echte|vieze|vuile|solo|proprio|vero|vera)\\s+){0,3}(?=\\S)|\\b(?:such|what) an?\\s+|\\b(?:an?|the)\\s+(?:total|complete|absolute|utter|fucking|f\\*cking|massive|huge|giant)\\s+|\\bthe\\s+(?:dumbest|stupidest|ugliest|worst)\\s+(?=\\w)|\\b(?:shut up|listen here),?\\s+(?!you\\b)",
  ),
  s(
    'directed',
    0.3,
    '',
    "\\b(?:he|she|they|him|her|coworker|boss|colleague|wife|husband|teacher)(?:'s| is| are|'re)\\s+(?:a|an|such a|the biggest|a total|a complete)\\s+",
  ),
  // The same cue in scripts without ASCII word boundaries.
  s(
    'directed',
    0.45,
    '',
    '(?:^|[^\\p{L}])(?:ты|jesteś|ty)\\s+(?:(?:такой|такая|просто|реально|taki|taka|ty)\\s+){0,2}(?=\\S)|你这个|你个|你(?:他妈的|丫)?是个|你真是个?|你就是个?|(?:お前|おまえ|てめえ|貴様)は?(?:本当に|マジで|ほんとに)?',
    'giu',
  ),
  words('insult', 0.65, CJK_STRONG, false, false),
  words('insult', 0.3, CJK_MILD, false, false),
  words('profanity', 0.3, CJK_PROFANITY, false, false),
  words('insult', 0.6, SHUT_UP),
  s(
    'insult',
    0.6,
    "halt,halt's",
    "\\bhalt(?:'s|\\s+(?:endlich|doch|einfach|mal|jetzt))?\\s+(?:die\\s+(?:klappe|fresse|schnauze)|dein(?:e)?\\s+(?:maul|fresse|schnauze|klappe))\\b",
  ),
  words('insult', 0.85, GET_LOST),
  s('insult', 0.85, '滚开,给我滚,你滚,消えろ,失せろ', '滚开|给我滚|你滚|消えろ|失せろ'),
  // "you disgusting little rat", "pathetic loser": an insult built from milder words.
  leading(
    s(
      'insult',
      0.55,
      'disgusting,spineless,filthy,miserable,worthless,pathetic,useless,stupid,dumb,ugly,brain-dead,braindead,moronic,idiotic,retarded,brainless,gutless,clueless,insufferable,vile,despicable,repulsive,pitiful,smelly,stinking,fucking,f*cking,goddamn',
      `\\b${INSULT_ADJ}(?:,?\\s+(?:and\\s+)?(?:${INSULT_ADJ}|little|old|big|fat))*,?\\s+${INSULT_NOUN}\\b`,
    ),
  ),
  s(
    'insult',
    0.6,
    'waste of',
    '\\b(?:a\\s+|total\\s+|complete\\s+|absolute\\s+)?waste of (?:space|oxygen|air|skin|sperm|a life)\\b',
  ),
  s(
    'insult',
    0.8,
    "should have,should've,shouldve",
    "\\b(?:your (?:mother|mom|mum|mama|parents|dad|father)\\s+(?:should(?: have|'ve)|shoulda)\\s+(?:aborted|swallowed|drowned) you|you should(?: have|'ve) been aborted)\\b",
  ),
  s(
    'insult',
    0.6,
    'nobody would,nobody will,no one would,no one will,everyone is,everybody is',
    '\\b(?:nobody|no one) (?:would|will) (?:miss you|care(?: about you| if you)|notice|mourn you)\\b|\\b(?:everyone|everybody) (?:is|was) (?:so )?ashamed of you\\b',
  ),

  // ---------------------------------------------------------------- threats
  s(
    'threat',
    0.85,
    'kill,murder,hurt,stab,shoot,beat,strangle,choke,rape,burn,bomb,slaughter,behead,punch,smash,bury,break your,break his,break her,cut you,cut your,end you,gut you',
    "\\b(?:i(?:'m| am)?\\s+(?:going to|gonna|about to)|i(?:'ll| will| shall)|we(?:'re| are)?\\s+(?:going to|gonna)|we(?:'ll| will)|i swear i(?:'ll| will)|(?:someone|somebody) (?:should|needs to|ought to|has to|must)|i want to|i'm coming to|i might just)\\s+(?:\\w+\\s+){0,3}?(?:kill|murder|hurt|stab|shoot|beat|strangle|choke|rape|burn|bomb|slaughter|behead|punch|break|smash|gut|cut|bury|end)\\b(?!\\s+(?:an?\\s+|the\\s+|some\\s+)?(?:videos?|photos?|pictures?|films?|movies?|scenes?|clips?|e-?mails?|messages?|texts?|notes?|dms?|lines?|calls?|shots?|hoops|pool|breeze|questions?|looks?|glances?|replies|reply)\\b)[^.!?\\n]{0,30}?\\b(?:you|ya|u|him|her|them|your|his|their|family|kids|children|wife|husband|mother|journalist|reporter|judge|politician|senator|president|mayor|cop|officer|guy|teacher|boss|neighbou?r|house|everyone|people)\\b(?!\\s+(?:an?\\s+)?(?:e-?mail|message|text|note|dm|line|call))",
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
    'watch your,regret,pay for,make you pay,make him pay,make her pay,make them pay,end up,dead man,coming for,afraid to',
    "\\bwatch your back\\b|\\byou(?:'ll| will| are going to|'re going to|'re gonna)\\s+(?:regret|pay for)\\b(?!\\s+(?:not|never|missing|skipping|buying|selling|passing|it if|this if|that if)\\b)|\\bmake (?:you|him|her|them) pay\\b|\\bend up (?:in|at the bottom of) (?:a|the) (?:hospital|morgue|grave|body bag|ditch|river|lake|wheelchair|coffin|box|trunk|gutter)\\b|\\bend up (?:six feet under|in pieces|dead)\\b|\\byou(?:'re| are) a dead man\\b|\\bwe(?:'re| are) coming for you\\b|\\b(?:be|stay) afraid to (?:leave|go out)",
  ),
  s(
    'threat',
    0.8,
    'bullet,brains,throat,head in,face in,skull',
    '\\b(?:put|pump|stick)\\s+(?:a|some)\\s+(?:bullets?|lead)\\s+(?:in|into|through)\\s+(?:you|him|her|them|that|this|his|their|your)\\b|\\bblow\\s+(?:your|his|her|their)\\s+(?:brains|head)\\s+out\\b|\\b(?:slit|cut)\\s+(?:your|his|her|their)\\s+throat\\b|\\b(?:bash|smash|kick|cave)\\s+(?:your|his|her|their)\\s+(?:head|face|skull)\\s+in\\b',
  ),
  s(
    'threat',
    0.6,
    'find out,make you,make your',
    '\\bfind out where (?:you|she|he|they) (?:live|lives|work|works|sleep)\\b|\\bmake (?:you|him|her|them) suffer\\b|\\bmake your life (?:a )?(?:living )?(?:hell|miserable|a nightmare)\\b',
  ),
  s(
    'threat',
    0.6,
    'if you',
    "\\bif you\\s+(?:ever\\s+)?(?:come|show up|go|talk|say|post|tell|step)\\b[^.!?\\n]{0,40}\\byou(?:'re| are| will be|'ll be) (?:dead|done for|finished)\\b",
  ),
  s(
    'threat',
    0.45,
    'dead',
    "\\byou(?:'re| are) dead(?: meat)?\\b(?!\\s+(?:to me|tired|wrong|right|serious|on|inside))",
  ),
  s('threat', 0.45, 'find you', "\\bwe(?:'ll| will) find you\\b|\\bi(?:'ll| will) find you\\b"),
  s(
    'threat',
    0.6,
    'hunt,days are,one eye,live to,going to get,get hurt',
    "\\b(?:i(?:'ll| will)|we(?:'ll| will))\\s+hunt (?:you|him|her|them) down\\b|\\byour days are numbered\\b|\\bsleep with one eye open\\b|\\b(?:won'?t|will not) live to see\\b|\\byou(?:'re| are) going to get hurt\\b|\\byou(?:'ll| will) get hurt\\b",
  ),
  s(
    'threat',
    0.75,
    'hope you,hope your,die in,drop dead,rot in',
    '\\bi hope (?:you|u|your (?:whole )?(?:family|kids|children|mother|mom|mum|wife|husband|dog|parents)) (?:all )?(?:die|dies|get cancer|gets cancer|rot|burn|suffer|choke|get raped|gets raped|get hit by a (?:car|bus|truck)|gets hit by a (?:car|bus|truck))\\b|\\bdie in a fire\\b|\\bdrop dead\\b|\\brot in hell\\b',
  ),
  words('threat', 0.85, THREATS),
  words('threat', 0.85, THREATS_CJK, false, false),
  words('threat', 0.6, MENACE),
  words('threat', 0.6, MENACE_CJK, false, false),
  words('threat', 0.45, VEILED),
  words('threat', 0.45, VEILED_CJK, false, false),
  s(
    'threat',
    0.85,
    'dir,ihnen,euch',
    '(?<![\\p{L}])(?:dir|ihnen|euch)\\s+(?:alle\\s+|jeden\\s+)?(?:die\\s+|den\\s+)?(?:knochen|beine|arme|fresse|zähne|schädel|hals)\\s+(?:brechen|polieren|einschlagen|ausschlagen|umdrehen)',
    'giu',
  ),
  s('threat', 0.7, 'beat you,beat him,beat her,beat them', '\\bbeat (?:you|him|her|them) to death\\b'),
  s(
    'threat',
    0.85,
    'dich um,dich töten,dich abstechen,dich erschießen,te tuer,te buter,te crever,te défoncer,te voy,te mato,ti ammazzo,ti uccido,te matar,maak je af,vermoord je',
    '\\bich (?:bringe?|werde) dich (?:um|umbringen|töten|abstechen|erschießen)\\b|\\bje vais te (?:tuer|buter|crever|défoncer)\\b|\\bte voy a (?:matar|partir la cara)\\b|\\bte mato\\b|\\bti (?:ammazzo|uccido)\\b|\\bvou te matar\\b|\\bik (?:maak je af|vermoord je)\\b',
  ),

  // ---------------------------------------------------------------- hate
  words('hate', 0.85, SLURS, true),
  s('hate', 0.8, 'hate', `\\bi (?:fucking |really |just )?hate (?:all\\s+)?(?:the\\s+)?${GROUP}\\b`),
  s(
    'hate',
    0.75,
    GROUP_ANCHORS,
    `\\b${GROUP}\\s+(?:are|r)\\s+(?:ruining|destroying|invading|infesting|polluting|replacing|taking over)\\s+(?:our|this|the|my)\\b`,
  ),
  s(
    'hate',
    0.6,
    'go back to',
    '\\bgo back to (?:your|their) (?:own )?(?:country|countries|jungle|desert|cave)\\b|\\bgo back (?:to )?where (?:you|they) came from\\b',
  ),
  s(
    'hate',
    0.8,
    GROUP_ANCHORS,
    `\\b${GROUP}\\s+(?:are|r|is)\\s+(?:all\\s+)?(?:just\\s+|nothing but\\s+|so\\s+|such\\s+)?(?:(?!(?:not|never|no|rarely|less|more|unfairly|wrongly|often|falsely|portrayed|described|called|labell?ed|stereotyped|accused|seen|depicted|branded|treated|viewed|considered|thought|said|than|victims)\\b)[\\w-]+,?\\s+){0,4}?${DEHUMANISE}\\b`,
  ),
  s(
    'hate',
    0.8,
    GROUP_ANCHORS,
    `\\b${GROUP}\\s+(?:should|must|need to|ought to|deserve to)\\s+(?:all\\s+)?(?:die|be (?:killed|exterminated|deported|gassed|locked up|sterili[sz]ed|banned|thrown out|wiped out|eliminated)|not be allowed|stay in the kitchen|go back|never have been born|be (?:shot|hanged|hung|rounded up|sent back|purged|castrated|burned|burnt|put down)|not (?:exist|breed|reproduce|have rights|vote)|rot|burn|all die)`,
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
  words('sexual', 0.45, SEXUAL_TOPIC),
  // Asking for it to be produced, not talking about it: "write porn about ...", "generate some smut".
  leading(
    s(
      'sexual',
      0.8,
      'write,generate,create,make,produce,send,show,give,draw',
      '\\b(?:write|generate|create|make|produce|send|show|give|draw)(?:\\s+me)?(?:\\s+(?:some|a|an|more))?\\s+(?:(?:explicit|graphic|hardcore|hot|dirty)\\s+)?(?:porn|porno|pornography|erotica|smut|hentai|nsfw (?:story|content|scene|image|pic)s?|sex (?:story|stories|scene|scenes))\\b',
    ),
  ),
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
    'sexual',
    0.8,
    "wanna have,want to have,let's have,lets have,wanna sleep,want to sleep,wanna fuck",
    "\\b(?:wanna|want to|let'?s|let us|i want to|i'd love to)\\s+(?:have sex|fuck|sleep|hook up)\\s+with\\s+(?:me|you|u)\\b",
  ),
  s(
    'sexual',
    0.8,
    'want to,wanna,love to,let me,going to,gonna',
    "\\b(?:i want to|i wanna|i'd love to|let me|i'm going to|i'm gonna)\\s+(?:fuck|ride|lick|suck|finger|undress)\\s+(?:you|u|ya|your|me)\\b",
  ),
  s(
    'sexual',
    0.6,
    'undress,strip for,take off,take it,take them,take everything,touch yourself,touch me,fuck me,blow me,sit on,talk dirty,naked body',
    '\\bundress (?:me|you|for me|slowly)\\b|\\b(?:while|as) you undress\\b|\\bstrip for me\\b|\\btake (?:it|them|everything|it all) off for me\\b|\\btake off (?:your|my) (?:clothes|panties|bra|underwear|knickers|pants)\\b|\\btouch (?:yourself|me) (?:all over|down there|while)\\b|\\bfuck me\\b|\\bblow me\\b|\\bsit on my face\\b|\\btalk dirty\\b',
  ),
  s(
    'sexual',
    0.55,
    'how wet,so wet,make me wet,so hard,makes me,make me hard,turn me on,turns me on,turned on,so horny',
    "\\bhow wet (?:you are|you get|i am)\\b|\\b(?:you(?:'re| are)|i(?:'m| am)) so (?:wet|hard) for\\b|\\bmakes? me (?:so )?(?:wet|hard)\\b|\\bturns? me on\\b|\\bso horny\\b",
  ),
  // What someone would do to someone's body: suggestive, sexual with an explicit cue beside it.
  s(
    'sexual',
    0.45,
    'in bed,together in,alone in',
    '\\bin bed with (?:me|you)\\b|\\b(?:alone|together) in bed\\b|\\bin bed (?:together|tonight)\\b',
  ),
  s(
    'sexual',
    0.45,
    'do to me,do to you,do to my,do to your',
    "\\b(?:what|things|everything)\\s+(?:you(?:'d| would| want to| wanna| will)|i(?:'d| would| want to| wanna| will))\\s+do to (?:me|you|my body|your body)\\b",
  ),
  s(
    'explicit',
    0.3,
    '',
    '\\b(?:explicit|graphic|graphic detail|in (?:great |vivid )?detail|dirty|steamy|raunchy|smutty|nsfw|x-rated|lewd|vielen details)\\b',
  ),

  // ---------------------------------------------------------------- self-harm
  s(
    'self_harm',
    0.85,
    'myself,suicide,overdose,to live,be alive,to exist,wake up,to die,wanna die,deeper,end it all,end my,my life,my own life,my wrist',
    "\\b(?:i|i'm|i am|i've|i have|im)\\b[^.!?\\n]{0,30}?\\b(?:kill myself|end (?:it all|my (?:own )?life)|take my (?:own )?life|commit suicide|hurt myself|(?:cut|cutting|harm|harming|hang|starve|starving|burn|burning) myself|overdose|(?:don'?t|do not|no longer) want to (?:live|be alive|exist|wake up)|(?:want|wanna) to die(?!\\s+(?:laughing|of|from|for|to see|trying|inside))|wanna die(?!\\s+(?:laughing|of|from|for))|planning (?:my|to commit) suicide|cut deeper|(?:cut|slit|slash) my wrists?)\\b",
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
  // Telling someone else to do it: "you should slit your wrists", "go hang yourself".
  s(
    'self_harm',
    0.85,
    'yourself,your wrist,your throat,jump off,drink bleach,overdose,end your',
    "\\b(?:you should|you need to|you ought to|just|go|go and|why don'?t you|why not|do (?:us|everyone|the world) a favou?r and|please|better)\\s+(?:\\w+\\s+){0,2}?(?:kill yourself|hang yourself|slit your (?:wrists?|throat)|cut yourself(?!\\s+(?:some\\s+)?(?:slack|a break|a piece|a slice|free|loose|in\\b|on\\b))|jump off (?:a|the) (?:bridge|building|cliff|roof)|drink bleach|overdose|starve yourself|off yourself|end your (?:own )?life|neck yourself|rope yourself|unalive yourself)\\b",
  ),
  s(
    'self_harm',
    0.8,
    'starv',
    '\\bstarv(?:e|ing) yourself\\b[^.!?\\n]{0,30}\\b(?:is|are)\\s+(?:the\\s+)?(?:only|best|fastest|right|easiest)\\s+(?:way|thing)\\b',
  ),
  words('self_harm', 0.85, SELF_HARM_URGE),
  // 死ね is "die!" but 死ねない, 死ねば are "cannot die", "if I die".
  s(
    'self_harm',
    0.85,
    '去死,自杀吧,死ね,自殺しろ',
    '去死吧|你去死|快去死|自杀吧|怎么还不去死|死ね(?![ないるばずま])|自殺しろ',
  ),
  // Naming the subject without intent: clinical notes, prevention, news. Reported low.
  s(
    'self_harm',
    0.3,
    'suicid,self-harm,self harm,selbstmord',
    '\\bsuicid(?:e|al)\\b|\\bself[- ]harm\\b|\\bselbstmord\\b',
  ),
];

/** Words that split a run of spaced-out letters back into words ("f u c k i n g i d i o t"). */
export const SEGMENT_WORDS: readonly string[] = [
  ...STRONG_INSULTS,
  ...MILD_INSULTS,
  ...PROFANITY,
  ...SLURS,
  ...SEXUAL_STRONG,
  ...SEXUAL_TOPIC,
  'you',
  'are',
  'your',
  'such',
  'piece',
  'shut',
  'kill',
  'yourself',
  'die',
  'hate',
  'the',
  'and',
];

/** A word being talked about rather than used: "the word 'idiot'", "is 'retard' still ...". */
export const MENTION_BEFORE =
  /(?:\b(?:the|a)\s+(?:word|term|slur|expression|phrase|insult)\s*|\bcalled\s*|\bcalled\s+(?:me|him|her|them|us|my\s+\w+)\s+(?:an?\s+)?(?:[\w-]+,?\s+){0,2}|\bsaying\s*)["'“‘]?$/i;

/**
 * A question about a word rather than its use: "is 'muppet' offensive?", "Ta gueule is a
 * rude French expression", "what does X mean".
 */
export const MENTION_FRAME =
  /\b(?:is|are|was|sounds?)\s+(?:it\s+|this\s+|that\s+|the (?:word|term|phrase|expression)\s+)?(?:(?:too|very|really|considered)\s+)?(?:rude|offensive|vulgar|derogatory|impolite|harsh|a slur|an insult|a swear ?word|profane|inappropriate)\b|\b(?:an?|the)\s+(?:(?:rude|offensive|vulgar|crude|derogatory|impolite|common|french|german|spanish|italian|russian|polish|dutch|portuguese|british|american|slang)\s+){1,2}(?:word|expression|phrase|term|insult|slur|swear ?word|idiom)\b|\bwhat does\b[^?\n]{0,40}\bmean\b|\b(?:ist das|c'est|es|è)\s+(?:unhöflich|beleidigend|impoli|grossier|ofensivo|maleducado|offensant|offensivo|scortese)\b/i;

/**
 * A person is not the target when the insulting adjective describes a thing: "a stupid
 * mistake", "this useless feature".
 */
export const THING_AFTER =
  /^\s+(?:little\s+)?(?:mistakes?|questions?|ideas?|bugs?|errors?|things?|decisions?|moves?|jokes?|excuses?|designs?|code|quer(?:y|ies)|features?|problems?|typos?|rules?|games?|movies?|films?|songs?|books?|shows?|meetings?|apps?|websites?|software|polic(?:y|ies)|systems?|process(?:es)?|printers?|computers?|phones?|cars?|machines?|tests?|setups?|config|ways?|names?|comments?|autocorrect|weather|traffic)\b/i;

/** Someone else urged it: "a user told me to kill myself" is harassment being reported. */
export const SELF_HARM_URGED =
  /\b(?:told|tells|telling|said|says|asked|asks|wanted|wants|urged|urges|dared|dares|encouraged|encourages)\s+(?:me|us)\s+to\s+(?:go\s+)?(?:kill|hang|hurt|cut|starve)\s+(?:myself|ourselves)\b/i;

/** A cut or burn that happened by accident: first aid, not self-harm. */
export const SELF_HARM_ACCIDENT =
  /\b(?:by accident|accidental(?:ly)?|while (?:cooking|shaving|chopping|cutting|slicing|opening|gardening|working|climbing)|paper cut|on (?:a|the) (?:knife|glass|tin|can|fence|nail)|clean the wound|first aid|stitches)\b/i;

/**
 * Someone else's claim reported or questioned ("why do people say immigrants are
 * criminals?", "the myth that ..."), not the speaker's own.
 */
export const HATE_REPORTED =
  /\b(?:(?:people|some|they|he|she|politicians|trolls|racists|critics|others|many)\s+(?:say|says|said|claim|claims|claimed|argue|argues|believe|believes|think|thinks)|(?:myth|stereotype|trope|claim|idea|notion|narrative|lie|belief|rhetoric|propaganda)s?)\s+(?:that\s+)?(?:all\s+)?$/i;

/** Words near a self-harm hit that make it about help rather than intent. */
export const SELF_HARM_HELP =
  /\b(?:prevention|hotline|crisis (?:line|text)|helpline|lifeline|988|samaritans|warning signs|risk factors|history of|if you or someone|support (?:group|line)|awareness|research|statistics|programme|program|clinic|therapist|counsel)/i;
