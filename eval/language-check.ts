/**
 * `npm run bench:quality`, language-mismatch part (issue 35): what the check of
 * core/scoring/language-mismatch.ts flags on texts of known language (the English dev sentences
 * and the hand-written pairs of each language), and what it costs next to text scoring (the
 * baseline, timed in the same run on the same texts).
 */
import { languageMismatch } from '../core/scoring/language-mismatch';

const r3 = (x: number): number => Math.round(x * 1000) / 1000;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** ms of `pass`, repeated `reps` times, per pass. */
function timed(pass: () => void, reps: number): number {
  const t0 = performance.now();
  for (let k = 0; k < reps; k++) pass();
  return (performance.now() - t0) / reps;
}

const LANGUAGES = ['en', 'de', 'fr', 'ja'] as const;

/**
 * The figures of the check: its flags on `labelled` texts of known language (per model: texts
 * flagged, those with the right detectedLanguage, false alarms = a text flagged for its own
 * language's model or named wrongly), then its cost over `texts` against `scorePass`, which
 * scores all of them with text-scores' default composition and without the check (the check
 * runs only where the model's language is given, core/scoring/text.ts).
 */
export function measureLanguageCheck(
  texts: readonly string[],
  scorePass: () => void,
  labelled: Record<(typeof LANGUAGES)[number], readonly string[]>,
): Record<string, number> {
  const figures: Record<string, number> = {};
  console.log('\nlanguage check: texts of each language (rows) flagged for each model (columns), right language / all');
  console.log(['text'.padEnd(12), ...LANGUAGES.map((m) => `${m} model`.padStart(12))].join(' '));
  let falseAlarms = 0;
  let right = 0;
  let mismatched = 0;
  for (const language of LANGUAGES) {
    const cells: string[] = [];
    for (const model of LANGUAGES) {
      let flagged = 0;
      let named = 0;
      for (const t of labelled[language]) {
        const m = languageMismatch(t, model);
        if (!m) continue;
        flagged++;
        if (m.detectedLanguage === language && model !== language) named++;
        else falseAlarms++;
      }
      if (model !== language) {
        right += named;
        mismatched += labelled[language].length;
      }
      cells.push(`${named}/${flagged}`.padStart(12));
    }
    console.log([`${language} (${labelled[language].length})`.padEnd(12), ...cells].join(' '));
  }
  figures.language_check_false_alarms = falseAlarms;
  figures.language_check_flagged_share = r3(right / mismatched);
  console.log(
    `false alarms ${falseAlarms}; ${right} of ${mismatched} (text, other model) cases flagged with the right language (short texts have too few function words to be sure)`,
  );

  const checkPass = () => {
    for (const t of texts) languageMismatch(t, 'de');
  };
  for (let w = 0; w < 2; w++) {
    scorePass();
    checkPass();
  }
  // Each timing lasts >= 150 ms (a check pass takes about a millisecond); the figure is the median
  // of 15 adjacent (scoring, check) pairs' ratios, the order alternating.
  const scoreReps = Math.max(1, Math.ceil(150 / timed(scorePass, 1)));
  const checkReps = Math.max(1, Math.ceil(150 / timed(checkPass, 1)));
  const scoreMs: number[] = [];
  const checkMs: number[] = [];
  const ratios: number[] = [];
  for (let k = 0; k < 15; k++) {
    // Scoring before the check on even rounds, after it on odd ones.
    const before = k % 2 === 0 ? timed(scorePass, scoreReps) : -1;
    const c = timed(checkPass, checkReps);
    const s = before >= 0 ? before : timed(scorePass, scoreReps);
    scoreMs.push(s);
    checkMs.push(c);
    ratios.push(c / s);
  }
  const share = median(ratios);
  figures.language_check_share_of_scoring = Math.round(share * 10_000) / 10_000;
  figures.language_check_us_per_text = r3((1000 * median(checkMs)) / texts.length);
  figures.language_check_scoring_us_per_text = r3((1000 * median(scoreMs)) / texts.length);
  console.log(
    `language check cost over ${texts.length} texts: ${figures.language_check_us_per_text} µs a text against ${figures.language_check_scoring_us_per_text} µs of text scoring in the same run: ` +
      `${(100 * share).toFixed(1)}% of text scoring (median of 15 adjacent pairs' ratios)`,
  );
  return figures;
}
