/**
 * The request bodies built from the form.
 */
import { splitTexts } from './samples';
import { $, state } from './state';

export const splitWords = (s: string): string[] =>
  s
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean);

export function textRequest(): any {
  const texts = splitTexts($<HTMLTextAreaElement>('texts').value);
  const dims = state.dims.filter((d) => splitWords(d.words).length > 0);
  const dimensions = dims.map((d) => ({
    id: d.id,
    type: d.type,
    name: d.name || undefined,
    words: splitWords(d.words),
    ...(d.type === 'axis' ? { oppositeWords: splitWords(d.opposite) } : {}),
  }));
  const mapperKeys: string[] = [];
  const mappers: Array<{ id: string; weight: number }> = [];
  document.querySelectorAll<HTMLInputElement>('#mappers input[type=checkbox]').forEach((cb) => {
    if (!cb.checked) return;
    const key = cb.dataset.key!;
    mapperKeys.push(key);
    const w =
      Number(
        document.querySelector<HTMLInputElement>(`#mappers input[data-weight="${CSS.escape(key)}"]`)?.value ?? 0,
      ) || 0;
    if (w !== 0) mappers.push({ id: key, weight: Math.max(-10, Math.min(10, Math.round(w))) });
  });
  const commonWords = Number($<HTMLInputElement>('model-rank').value);
  const goalConfig = {
    // 0: the factor is left out of the goal (not shown as a factor worth 0).
    ...(commonWords !== 0 ? { modelRankScore: commonWords } : {}),
    dimensions: dims
      .filter((d) => d.weight !== 0)
      .map((d) => ({ id: d.id, weight: Math.max(-10, Math.min(10, Math.round(d.weight))) })),
    mappers,
    normalization: $<HTMLSelectElement>('normalization').value,
  };
  const composition = $<HTMLSelectElement>('composition').value;
  // The highlights slice the texts with JavaScript (UTF-16) indices, so the offsets come in that unit.
  return {
    texts,
    embeddingModelId: state.modelId,
    dimensions,
    mapperKeys,
    goalConfig,
    composition,
    explain: true,
    offsetUnit: 'utf16',
  };
}
