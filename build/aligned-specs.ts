/**
 * The aligned de/fr/ja models (build/aligned-models.ts builds them): for each language, one model
 * per English base it is projected onto. The GloVe ones (`*-aligned-glove-6b-100d`) are the
 * models from before the distilled default, kept byte for byte (decisions.md "Models (turn 3)": earlier ids stay
 * unchanged); the distilled ones (`*-aligned-distilled-100d`) project the same dictionaries onto
 * the default English model and are the defaults of their language. Plain data: the CLI, the
 * playground's defaults and the tests read it without loading a build step.
 */
import { COMPOUND_FEATURE } from '../core/projection';
import { DEFAULT_MODEL_ID, GLOVE_MODEL_ID } from './paths';

export const ALIGNED_LANGUAGES = ['de', 'fr', 'ja'] as const;
export type AlignedLanguage = (typeof ALIGNED_LANGUAGES)[number];

export interface DebianPin {
  pkg: string;
  version: string;
  /** A file of the package (its unpacked root is found from it). */
  file: string;
}

/** The English model an aligned model is projected onto, as its catalog fields name it. */
export interface EnglishBase {
  id: string;
  /** Prefix of the aligned models' tag ("GloVe 6B 100d via Ding de-en"). */
  tag: string;
  sources: string[];
  /** The English vectors' licence, after the dictionaries'. */
  license: string;
  /** Features the aligned models add for this base. */
  features: string[];
  /**
   * Projection of the models on this base: 2 = frequency-rank weights (the GloVe ones, kept as
   * built), 3 = also the dictionary's sense order (core/projection.ts `senseOrder`; German: a
   * word's main Ding entries first, build/dictionaries.ts `mainEntriesFirst`).
   */
  projectionVersion: 2 | 3;
}

export interface AlignedSpec {
  id: string;
  language: AlignedLanguage;
  /** The English model projected onto: the model's companion (manifest `englishModelId`). */
  english: EnglishBase;
  /** The aligned model French is also projected through (the German one of the same base), or null. */
  pivot: string | null;
  country: string;
  tag: string;
  packages: DebianPin[];
  /** Dictionary release used as the training date. */
  trainingYear: string;
  trainingMonth: string;
  sources: string[];
  license: string;
  features: string[];
}

export const GLOVE_BASE: EnglishBase = {
  id: GLOVE_MODEL_ID,
  tag: 'GloVe 6B 100d',
  sources: [`GloVe 6B 100d (Wikipedia 2014, Gigaword 5) via ${GLOVE_MODEL_ID}`],
  license: 'PDDL-1.0 (GloVe vectors)',
  features: [],
  projectionVersion: 2,
};

/** The default English model: GloVe and Universal Sentence Encoder lite vectors distilled into one space. */
export const DISTILLED_BASE: EnglishBase = {
  id: DEFAULT_MODEL_ID,
  tag: 'distilled GloVe + USE 100d',
  sources: [
    `GloVe 6B 100d and Universal Sentence Encoder lite word vectors, retrofitted to WordNet and distilled to 100 dimensions, via ${DEFAULT_MODEL_ID}`,
  ],
  license:
    'PDDL-1.0 (GloVe vectors), Apache-2.0 (Universal Sentence Encoder lite weights), WordNet 3.0 license (Princeton)',
  features: [`onto-${DEFAULT_MODEL_ID}`],
  projectionVersion: 3,
};

const BASE_FEATURES = ['dictionary-projected', 'aligned-en', 'frequency-ordered', 'int8-quantized'];
const DING = 'Ding de-en dictionary 2023-01-30 (debian:trans-de-en 1.9-6)';

/** The three aligned models projected onto `english`, with these ids. */
function alignedSpecs(
  english: EnglishBase,
  ids: Record<AlignedLanguage, string>,
): Record<AlignedLanguage, AlignedSpec> {
  return {
    de: {
      id: ids.de,
      language: 'de',
      english,
      pivot: null,
      country: 'DE',
      tag: `${english.tag} via Ding de-en`,
      packages: [{ pkg: 'trans-de-en', version: '1.9-6', file: 'usr/share/trans/de-en' }],
      // Ding "Version :: devel 2023-01-30"
      trainingYear: '2023',
      trainingMonth: '01',
      sources: [DING, ...english.sources],
      license: `GPL-2.0-or-later (Ding de-en dictionary, TU Chemnitz) / ${english.license}`,
      features: [...BASE_FEATURES, COMPOUND_FEATURE, ...english.features],
    },
    fr: {
      id: ids.fr,
      language: 'fr',
      english,
      pivot: ids.de,
      country: 'FR',
      tag: `${english.tag} via FreeDict fr-en and WikDict fr-de`,
      packages: [
        { pkg: 'dict-freedict-fra-eng', version: '2022.04.21-1', file: 'usr/share/dictd/freedict-fra-eng.index' },
        { pkg: 'dict-freedict-eng-fra', version: '2022.04.21-1', file: 'usr/share/dictd/freedict-eng-fra.index' },
        { pkg: 'dict-freedict-fra-deu', version: '2022.12.07-2', file: 'usr/share/dictd/freedict-fra-deu.index' },
        { pkg: 'dict-freedict-deu-fra', version: '2022.12.07-2', file: 'usr/share/dictd/freedict-deu-fra.index' },
      ],
      // The newest of the four dictionary releases (WikDict fra-deu/deu-fra 2022-12-07).
      trainingYear: '2022',
      trainingMonth: '12',
      sources: [
        'FreeDict fra-eng 0.4.1 and eng-fra 0.1.6 (debian:dict-freedict-fra-eng, dict-freedict-eng-fra 2022.04.21-1)',
        `WikDict fra-deu and deu-fra (debian:dict-freedict-fra-deu, dict-freedict-deu-fra 2022.12.07-2), through ${ids.de}`,
        DING,
        ...english.sources,
      ],
      license: `GPL-2.0-or-later (FreeDict, Ding) and CC-BY-SA-3.0 (WikDict, from Wiktionary) / ${english.license}`,
      features: [...BASE_FEATURES, 'pivot-de', ...english.features],
    },
    ja: {
      id: ids.ja,
      language: 'ja',
      english,
      pivot: null,
      country: 'JP',
      tag: `${english.tag} via JMdict/EDICT (approximate)`,
      packages: [{ pkg: 'edict', version: '2021.02.03-1', file: 'usr/share/edict/edict' }],
      trainingYear: '2021',
      trainingMonth: '02',
      sources: ['JMdict/EDICT 2021-02-03, EDRDG (debian:edict 2021.02.03-1)', ...english.sources],
      license: `CC-BY-SA-3.0 (JMdict/EDICT, Electronic Dictionary Research and Development Group) / ${english.license}`,
      features: [...BASE_FEATURES, 'kana-and-kanji-forms', ...english.features],
    },
  };
}

/** The aligned models from before the distilled default, on GloVe (unchanged: stored results keep their meaning). */
export const ALIGNED_GLOVE = alignedSpecs(GLOVE_BASE, {
  de: 'de-aligned-glove-6b-100d',
  fr: 'fr-aligned-glove-6b-100d',
  ja: 'ja-aligned-glove-6b-100d',
});

/** The aligned models on the default English model: each language's default model. */
export const ALIGNED = alignedSpecs(DISTILLED_BASE, {
  de: 'de-aligned-distilled-100d',
  fr: 'fr-aligned-distilled-100d',
  ja: 'ja-aligned-distilled-100d',
});

/** Every aligned model, in build order (a pivot before the model projected through it). */
export const ALIGNED_MODELS: readonly AlignedSpec[] = [
  ...ALIGNED_LANGUAGES.map((l) => ALIGNED_GLOVE[l]),
  ...ALIGNED_LANGUAGES.map((l) => ALIGNED[l]),
];

/** The spec of an aligned model id, or undefined. */
export function alignedSpec(id: string): AlignedSpec | undefined {
  return ALIGNED_MODELS.find((s) => s.id === id);
}
