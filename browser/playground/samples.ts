/**
 * The sample inputs of the four languages with a default model (core/model-defaults.ts): restaurant
 * reviews, two topics that fit them (food, service), and words for the nearest-words chart and
 * the heatmap. The default goal is the sentiment mapper alone, so the goal score reads as "how
 * positive is this review"; the topics are scored and shown but weigh nothing until the user
 * gives them a weight.
 */
import type { DimRow } from './state';

export interface Samples {
  texts: string[];
  /** Topic name, seed words (comma separated). */
  topics: Array<[name: string, words: string]>;
  nearest: string;
  heatmap: string;
}

const SAMPLES: ReadonlyMap<string, Samples> = new Map([
  [
    'en',
    {
      texts: [
        'The food was not good at all.',
        'The pasta was delicious and the waiter was very friendly.',
        'We waited an hour for a cold pizza, and the staff ignored us.',
      ],
      topics: [
        ['food', 'food, meal, dish, taste'],
        ['service', 'service, waiter, staff, friendly'],
      ],
      nearest: 'pasta, pizza, bread',
      heatmap: 'good, bad, delicious, awful, waiter, kitchen, pizza, pasta',
    },
  ],
  [
    'de',
    {
      texts: [
        'Das Essen war überhaupt nicht gut.',
        'Die Nudeln waren köstlich und der Kellner war sehr freundlich.',
        'Wir haben eine Stunde auf eine kalte Pizza gewartet, und das Personal hat uns ignoriert.',
      ],
      topics: [
        ['Essen', 'Essen, Gericht, Mahlzeit, Geschmack'],
        ['Service', 'Service, Kellner, Personal, freundlich'],
      ],
      nearest: 'Nudeln, Pizza, Brot',
      heatmap: 'gut, schlecht, köstlich, furchtbar, Kellner, Küche, Pizza, Nudeln',
    },
  ],
  [
    'fr',
    {
      texts: [
        "La nourriture n'était pas bonne du tout.",
        'Les pâtes étaient délicieuses et le serveur était très aimable.',
        'Nous avons attendu une heure pour une pizza froide, et le personnel nous a ignorés.',
      ],
      topics: [
        ['cuisine', 'nourriture, repas, plat, goût'],
        ['service', 'service, serveur, personnel, aimable'],
      ],
      nearest: 'pizza, pain, fromage',
      heatmap: 'bon, mauvais, délicieux, affreux, serveur, cuisine, pizza, fromage',
    },
  ],
  [
    'ja',
    {
      texts: [
        '料理は全然おいしくなかった。',
        'パスタはとても美味しくて、店員さんはとても親切だった。',
        '冷たいピザを一時間も待たされ、店員に無視された。',
      ],
      topics: [
        ['料理', '料理, 食べ物, 食事, 味'],
        ['サービス', 'サービス, 店員, 接客, 親切'],
      ],
      nearest: 'パスタ, ピザ, パン',
      heatmap: '良い, 悪い, 美味しい, まずい, 店員, 台所, ピザ, パスタ',
    },
  ],
]);

/** The samples of a language; English for a language without its own. */
export function samplesOf(language: string): Samples {
  return SAMPLES.get(language) ?? SAMPLES.get('en')!;
}

/** The sample topics as dimension rows (weight 0: scored and shown, not part of the goal). */
export function sampleDims(language: string): DimRow[] {
  return samplesOf(language).topics.map(([name, words], i) => ({
    id: i + 1,
    name,
    type: 'manual',
    words,
    opposite: '',
    weight: 0,
  }));
}

/** The mapper variable the default goal uses: sentiment (VADER) when the model has it. */
export const GOAL_MAPPER = 'sentiment_valence';

/** The texts of a textarea value (a blank line between texts). */
export const splitTexts = (value: string): string[] =>
  value
    .split(/\n\s*\n/)
    .map((t) => t.trim())
    .filter(Boolean);
