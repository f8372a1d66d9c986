/**
 * Sample requests in each language the parity tests send to two deployments of the same build
 * (test/e2e/topology.test.ts, test/e2e/sharding.test.ts).
 */
export const texts: Record<string, string[]> = {
  en: ['The food was wonderful and the staff were kind.', 'A dull, rainy afternoon.'],
  de: ['Das Essen war wunderbar und das Personal freundlich.', 'Ein trüber, verregneter Nachmittag.'],
  fr: ['Le repas était merveilleux et le personnel aimable.', 'Un après-midi terne et pluvieux.'],
  ja: ['料理はすばらしく、店員は親切でした。', '退屈で雨の午後。'],
};

export const words: Record<string, string[]> = {
  en: ['food', 'happy', 'rain', 'zzzxq'],
  de: ['essen', 'glücklich', 'regen', 'zzzxq'],
  fr: ['repas', 'heureux', 'pluie', 'zzzxq'],
  ja: ['料理', '幸せ', '雨', 'zzzxq'],
};

/** A manual, an axis and a stored dimension (English seeds: an aligned model takes those it lacks from the companion). */
export const sampleDimensions = (language: string, storedId: number) => [
  { id: 1, type: 'manual', name: 'joy', words: ['joy', 'delight', ...words[language]!.slice(1, 2)] },
  { id: 2, type: 'axis', name: 'mood', words: ['good', 'great'], oppositeWords: ['bad', 'awful'] },
  { id: storedId, type: 'dimension' },
];

/** Stores the sample dimension (seeds only English has: aligned models take them from the companion); its id. */
export async function storeSampleDimension(base: string, admin: string): Promise<number> {
  const r = await fetch(`${base}/api/admin/v1/dimensions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'weather', words: ['sunshine', 'drizzle', 'overcast'] }),
  });
  if (r.status !== 201) throw new Error(`stored dimension: ${r.status} ${await r.text()}`);
  return ((await r.json()) as { id: number }).id;
}
