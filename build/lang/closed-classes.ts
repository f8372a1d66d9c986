/**
 * Closed classes per language: pronouns, auxiliaries and modal verbs (FLAG.FUNCTION, stop words
 * too) and number words (FLAG.NUMBER, never given synonyms). Hand-written from standard grammars;
 * short, so listed here in full.
 */
import type { Language } from '../../core/tokenizer/languages';

const EN_PRONOUNS =
  "i me my mine myself you your yours yourself yourselves he him his himself she her hers herself it its itself we us our ours ourselves they them their theirs themselves one oneself this that these those who whom whose which what whoever whomever whatever whichever everyone everybody everything someone somebody something anyone anybody anything no-one noone nobody nothing each either neither thee thou thy thine ya y'all";
const EN_AUXILIARIES =
  "be am is are was were been being 's 'm 're have has had having 've 'd do does did doing done can could may might must shall should will would ought 'll ca wo sha cannot gonna wanna gotta";
export const CLOSED_CLASSES: Record<Language, { function: string[]; numbers: string[] }> = {
  en: {
    function: `${EN_PRONOUNS} ${EN_AUXILIARIES}`.split(' '),
    numbers:
      'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion trillion'.split(
        ' ',
      ),
  },
  de: {
    function: (
      'ich mich mir mein meine du dich dir dein deine er ihn ihm sein seine sie ihr ihre ihnen es wir uns unser unsere euch euer eure man jemand niemand etwas nichts jeder jede jedes dieser diese dieses jener jene welcher welche welches wer wen wem wessen was sich selbst ' +
      'sein bin bist ist sind seid war warst waren wart gewesen wäre wären haben habe hast hat habt hatte hatten gehabt hätte hätten werden werde wirst wird werdet wurde wurden geworden würde würden ' +
      'können kann kannst könnt konnte konnten könnte könnten müssen muss musst müsst musste mussten müsste dürfen darf darfst dürft durfte dürfte sollen soll sollst sollt sollte sollten wollen will willst wollt wollte wollten mögen mag magst mögt mochte möchte möchten'
    ).split(' '),
    numbers:
      'null eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf zwanzig dreißig vierzig fünfzig sechzig siebzig achtzig neunzig hundert tausend million milliarde'.split(
        ' ',
      ),
  },
  fr: {
    function: (
      "je me moi tu te toi il elle lui on nous vous ils elles eux leur leurs se soi mon ma mes ton ta tes son sa ses notre nos votre vos ce cela ça ceci celui celle ceux celles qui que quoi dont lequel laquelle lesquels lesquelles quelqu'un rien chacun y en " +
      'être suis es est sommes êtes sont étais était étions étiez étaient serai sera serons seront serait seraient sois soit soyons soient fus fut furent ' +
      // The modal verbs pouvoir/devoir/vouloir stay content words (devoir is also a noun: "les devoirs").
      'avoir ai as a avons avez ont avais avait avions aviez avaient eu aurai aura aurons auront aurait auraient aie ait ayons aient eut'
    ).split(' '),
    numbers:
      'zéro un une deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze seize vingt trente quarante cinquante soixante cent mille million milliard'.split(
        ' ',
      ),
  },
  ja: {
    function:
      '私 僕 俺 あなた 君 彼 彼女 我々 私たち 彼ら これ それ あれ どれ ここ そこ あそこ どこ 誰 何 です ます でした ました だ である いる ある なる する れる られる せる させる'.split(
        ' ',
      ),
    numbers: '零 一 二 三 四 五 六 七 八 九 十 百 千 万 億'.split(' '),
  },
};
