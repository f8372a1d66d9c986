/**
 * The scoring tests' fixtures (word-scores and text-scores through the Worker): three synthetic
 * models in R2, English language data, and an "emo" mapper bundle with valence (NaN for every
 * third word) and arousal values; "elsewhere" belongs to another model.
 */
import type { LanguageData } from '../../../core/tokenizer';
import { makeModel, uploadEnglish, uploadMapper, uploadModel, type SyntheticModel } from './api';

export const WS = 'ws_demo';
export const WS_PATH = `/api/v1/workspaces/${WS}`;

export interface ScoringFixtures {
  m: SyntheticModel;
  big: SyntheticModel;
  other: SyntheticModel;
  lang: LanguageData;
  valence: Float64Array;
  arousal: Float64Array;
}

export async function uploadScoringFixtures(): Promise<ScoringFixtures> {
  const m = makeModel('score-en', { seed: 11 });
  const big = makeModel('score-big', { seed: 12, extra: 300 });
  const other = makeModel('score-other', { seed: 13 });
  await uploadModel(m);
  await uploadModel(big);
  await uploadModel(other);
  const lang = await uploadEnglish();
  const n = m.words.length;
  const valence = Float64Array.from({ length: n }, (_, r) => (r % 3 === 2 ? NaN : Math.sin(r)));
  const arousal = Float64Array.from({ length: n }, (_, r) => Math.cos(r) * 2);
  await uploadMapper(m, 'emo', { valence, arousal });
  await uploadMapper(other, 'elsewhere', { joy: new Float64Array(other.words.length) });
  return { m, big, other, lang, valence, arousal };
}
