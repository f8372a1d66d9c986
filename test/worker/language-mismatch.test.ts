/**
 * text-scores' languageMismatch extension (issue 35) through the Worker in workerd, on the real
 * models and language data (build/generated via FIXTURES, put into R2): on each model, a text
 * in each of the other languages carries the flag with the right detectedLanguage, a text in
 * the model's language and a short text carry none; an Idempotency-Key replay returns the
 * stored answer, flag included. The default model is built everywhere; the aligned de/fr/ja
 * models need Debian data: without them their cases skip with one line.
 */
import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { invalidateCatalog } from '../../worker/catalog/store';
import { call, token, WS } from './support/api';

const MODELS = {
  en: 'en-glove-6b-100d',
  de: 'de-aligned-glove-6b-100d',
  fr: 'fr-aligned-glove-6b-100d',
  ja: 'ja-aligned-glove-6b-100d',
} as const;
type Lang = keyof typeof MODELS;
const LANGUAGES = Object.keys(MODELS) as Lang[];

/** One everyday text per language (written for the tests, as in test/node/language-mismatch.test.ts). */
const TEXTS: Record<Lang, string> = {
  en: 'The hotel was clean and the staff were friendly, but the breakfast was not worth the price.',
  de: 'Das Hotel war sauber und das Personal sehr freundlich, aber das Frühstück ist den Preis nicht wert.',
  fr: "L'hôtel était propre et le personnel très aimable, mais le petit-déjeuner ne vaut pas le prix.",
  ja: 'ホテルは清潔でスタッフもとても親切でしたが、朝食は値段に見合いませんでした。',
};
const SHORT = 'Super!';

async function fixture(rel: string): Promise<ArrayBuffer | null> {
  const res = await env.FIXTURES.fetch(`http://f/${rel}`);
  return res.status === 200 ? res.arrayBuffer() : null;
}

const built = new Set<Lang>();
for (const l of LANGUAGES)
  if ((await env.FIXTURES.fetch(`http://f/models/${MODELS[l]}.json`)).status === 200) built.add(l);
const missing = LANGUAGES.filter((l) => !built.has(l));
if (missing.length > 0)
  console.warn(
    `[language-mismatch.test] skipped the ${missing.join(', ')} model cases: ${missing.map((l) => MODELS[l]).join(', ')} not built (the aligned models need apt-get: Debian/Ubuntu as root)`,
  );

const TEXT_SCORES = `/api/v1/workspaces/${WS}/text-scores`;

describe('text-scores languageMismatch in workerd', () => {
  beforeAll(async () => {
    for (const l of built) {
      await env.ARTIFACTS.put(`models/${MODELS[l]}.emb`, (await fixture(`models/${MODELS[l]}.emb`))!);
      await env.ARTIFACTS.put(`models/${MODELS[l]}.json`, (await fixture(`models/${MODELS[l]}.json`))!);
      await env.ARTIFACTS.put(`lang/${l}.bin`, (await fixture(`lang/${l}.bin`))!);
    }
    await invalidateCatalog(env);
  });

  for (const model of LANGUAGES)
    it.skipIf(!built.has(model))(
      `${model} model: the other languages' texts are flagged, its own and a short one not`,
      async () => {
        const r = await call('POST', TEXT_SCORES, {
          texts: [...LANGUAGES.map((l) => TEXTS[l]), SHORT],
          embeddingModelId: MODELS[model],
        });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        const flags = r.body.data.map((t: { languageMismatch?: unknown }) => t.languageMismatch ?? null);
        expect(flags).toEqual([
          ...LANGUAGES.map((l) =>
            l === model
              ? null
              : {
                  modelLanguage: model,
                  detectedLanguage: l,
                  evidence: l === 'ja' || model === 'ja' ? 'script' : 'stop-words',
                },
          ),
          null,
        ]);
        // Absent, not null, where there is no mismatch (the OpenAPI schema: optional).
        expect(r.body.data[LANGUAGES.indexOf(model)]).not.toHaveProperty('languageMismatch');
      },
    );

  it('an Idempotency-Key replay answers the stored body, flag included', async () => {
    const body = JSON.stringify({ texts: [TEXTS.en, TEXTS.fr], embeddingModelId: MODELS.en });
    const key = `language-mismatch-${crypto.randomUUID()}`;
    const headers = {
      authorization: `Bearer ${await token()}`,
      'content-type': 'application/json',
      'idempotency-key': key,
    };
    const first = await SELF.fetch(`http://x${TEXT_SCORES}`, { method: 'POST', headers, body });
    const firstText = await first.text();
    expect(first.status, firstText).toBe(200);
    expect(JSON.parse(firstText).data[1].languageMismatch).toEqual({
      modelLanguage: 'en',
      detectedLanguage: 'fr',
      evidence: 'stop-words',
    });
    const replay = await SELF.fetch(`http://x${TEXT_SCORES}`, { method: 'POST', headers, body });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.text()).toBe(firstText);
  });
});
