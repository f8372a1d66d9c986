/**
 * Asking before the offline scorer downloads a second model. A German, French or Japanese model
 * is aligned to an English one (core/projection.ts): a seed word it lacks (an English word typed
 * into a German topic) is looked up in that English companion, which the offline scorer then
 * downloads whole (tens of MB, kept in the browser). The API does this on the server at no cost to
 * the user, so only the offline mode asks: download the English model, or score without those
 * words. Seeds the model has never need the companion (core/engine.ts companionFor).
 */
import { defaultModelOf } from '../../core/model-defaults';
import { isPhrase } from '../../core/scoring/common';
import { languageName } from './labels';
import { offline } from './offline';
import { $, state } from './state';

/** The user's answer for this page's lifetime: yes, download the English model when needed. */
let agreed = false;

/** The seed words of the request that the picked model lacks (phrases aside: they never go to the companion). */
async function missingSeeds(req: any): Promise<string[]> {
  const words = [
    ...new Set(
      (req.dimensions as Array<{ words?: string[]; oppositeWords?: string[] }>).flatMap((d) => [
        ...(d.words ?? []),
        ...(d.oppositeWords ?? []),
      ]),
    ),
  ].filter((w) => !isPhrase(w));
  if (words.length === 0) return [];
  const { availabilities } = await offline().wordAvailabilities(state.modelId, { words });
  return availabilities.filter((a) => !a.isAvailable).map((a) => a.word);
}

/** The request without `words` (a dimension left without seeds is dropped, with its goal weight). */
function without(req: any, words: string[]): any {
  const drop = new Set(words);
  const keep = (ws: string[]) => ws.filter((w) => !drop.has(w));
  const dimensions = (req.dimensions as any[])
    .map((d) => ({ ...d, words: keep(d.words), ...(d.oppositeWords ? { oppositeWords: keep(d.oppositeWords) } : {}) }))
    .filter((d) => d.words.length > 0);
  const ids = new Set(dimensions.map((d) => d.id));
  return {
    ...req,
    dimensions,
    goalConfig: { ...req.goalConfig, dimensions: req.goalConfig.dimensions.filter((g: any) => ids.has(g.id)) },
  };
}

/**
 * The request to score offline, once the user has answered: as it is (the English model may be
 * downloaded), without the missing words, or null while the question is on screen (`rerun`
 * scores again with the answer).
 */
export async function companionChecked(req: any, rerun: () => void): Promise<any | null> {
  const box = $('companion-prompt');
  box.hidden = true; // a question of an earlier run (other seeds, model or mode) is not this one's
  const picked = state.models.find((m) => m.id === state.modelId);
  const language = picked?.language ?? 'en';
  if (state.mode !== 'offline' || language === 'en' || agreed) return req;
  // The model's own companion (an older *-glove-6b-100d model has GloVe's); null: not aligned, no
  // companion to download. A listing of cached models alone does not carry it (undefined), and
  // then the default English model is the likely one.
  const companion = picked?.companion === undefined ? defaultModelOf('en') : picked.companion;
  if (companion === null) return req;
  const missing = await missingSeeds(req);
  if (missing.length === 0) return req;
  const cached = await offline().listCachedModels();
  if (cached.some((c) => c.id === companion)) return req;
  if (box.dataset.answer === 'without') {
    delete box.dataset.answer;
    return without(req, missing);
  }
  const lang = languageName(language);
  box.replaceChildren();
  const p = document.createElement('p');
  p.textContent =
    `The ${lang} model does not know these seed words: ${missing.join(', ')}. ` +
    `Offline, they can be looked up in the English model the ${lang} model is aligned to: a one-time download ` +
    'of tens of megabytes, kept in this browser.';
  const yes = document.createElement('button');
  yes.type = 'button';
  yes.textContent = 'Download the English model and score';
  yes.addEventListener('click', () => {
    agreed = true;
    box.hidden = true;
    rerun();
  });
  const no = document.createElement('button');
  no.type = 'button';
  no.textContent = 'Score without these words';
  no.addEventListener('click', () => {
    box.dataset.answer = 'without';
    box.hidden = true;
    rerun();
  });
  box.append(p, yes, no);
  box.hidden = false;
  yes.focus();
  return null;
}
