/**
 * The dimensions editor (seed words, axis poles, goal weights) and the autocomplete of its word
 * fields.
 */
import { run, showError } from './scorers';
import { $, state, type DimRow } from './state';

export function renderDims(): void {
  const box = $('dimensions');
  box.replaceChildren();
  for (const d of state.dims) {
    const row = document.createElement('div');
    row.className = 'dim';
    row.innerHTML = `
      <input class="name" value="" placeholder="name">
      <select class="type"><option value="manual">manual</option><option value="axis">axis</option></select>
      <span class="ac-wrap"><input class="ac words" placeholder="seed words" autocomplete="off"></span>
      <span class="ac-wrap opp"><input class="ac opposite" placeholder="opposite pole" autocomplete="off"></span>
      <input class="weight" type="number" min="-10" max="10" title="goal weight (-10..10)">
      <button type="button" class="small remove" title="remove">×</button>`;
    const q = <T extends HTMLElement>(s: string) => row.querySelector(s) as T;
    q<HTMLInputElement>('.name').value = d.name;
    q<HTMLSelectElement>('.type').value = d.type;
    q<HTMLInputElement>('.words').value = d.words;
    q<HTMLInputElement>('.opposite').value = d.opposite;
    q<HTMLInputElement>('.weight').value = String(d.weight);
    (q('.opp') as HTMLElement).hidden = d.type !== 'axis';
    row.addEventListener('input', () => {
      d.name = q<HTMLInputElement>('.name').value;
      d.type = q<HTMLSelectElement>('.type').value as DimRow['type'];
      d.words = q<HTMLInputElement>('.words').value;
      d.opposite = q<HTMLInputElement>('.opposite').value;
      d.weight = Number(q<HTMLInputElement>('.weight').value) || 0;
      (q('.opp') as HTMLElement).hidden = d.type !== 'axis';
    });
    q('.remove').addEventListener('click', () => {
      state.dims = state.dims.filter((x) => x !== d);
      renderDims();
    });
    box.append(row);
    row.querySelectorAll<HTMLInputElement>('input.ac').forEach(attachAutocomplete);
  }
}

export function attachAutocomplete(input: HTMLInputElement): void {
  if (input.dataset.ac) return;
  input.dataset.ac = '1';
  const list = document.createElement('ul');
  list.className = 'ac-list';
  list.hidden = true;
  input.after(list);
  let timer = 0;
  let seq = 0;
  const pick = (word: string): void => {
    const parts = input.value.split(',');
    parts[parts.length - 1] = (parts.length > 1 ? ' ' : '') + word;
    input.value = parts.join(',') + ', ';
    list.hidden = true;
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.focus();
  };
  input.addEventListener('input', (ev) => {
    if (!(ev instanceof InputEvent)) return;
    clearTimeout(timer);
    const frag = input.value.split(',').pop()!.trim();
    if (frag.length < 1) {
      list.hidden = true;
      return;
    }
    const my = ++seq;
    timer = window.setTimeout(async () => {
      try {
        const { json } = await run('autocomplete', { word: frag, embeddingModelId: state.modelId });
        if (my !== seq) return;
        list.replaceChildren(
          ...(json.suggestions as string[]).map((w) => {
            const li = document.createElement('li');
            li.textContent = w;
            li.addEventListener('mousedown', (e) => {
              e.preventDefault();
              pick(w);
            });
            return li;
          }),
        );
        list.hidden = list.childElementCount === 0;
      } catch (err) {
        showError(err);
      }
    }, 120);
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !list.hidden && list.firstElementChild) {
      e.preventDefault();
      pick(list.firstElementChild.textContent!);
    } else if (e.key === 'Escape') list.hidden = true;
  });
  input.addEventListener('blur', () => setTimeout(() => (list.hidden = true), 150));
}
