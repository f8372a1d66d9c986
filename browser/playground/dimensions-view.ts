/**
 * The dimensions editor (seed words, axis poles, goal weights) and the autocomplete of its word
 * fields.
 */
import { run, showError } from './scorers';
import { $, state, type DimRow } from './state';

export function renderDims(): void {
  const box = $('dimensions');
  box.replaceChildren();
  state.dims.forEach((d, i) => {
    const row = document.createElement('div');
    row.className = 'dim';
    row.setAttribute('role', 'group');
    row.innerHTML = `
      <input class="name" value="" placeholder="name">
      <select class="type"><option value="manual">topic</option><option value="axis">two poles</option></select>
      <span class="ac-wrap"><input class="ac words" placeholder="seed words" autocomplete="off"></span>
      <span class="ac-wrap opp"><input class="ac opposite" placeholder="opposite pole" autocomplete="off"></span>
      <input class="weight" type="number" min="-10" max="10" title="Goal weight (−10 … 10; 0 = not in the goal)">
      <button type="button" class="small remove">×</button>`;
    const q = <T extends HTMLElement>(s: string) => row.querySelector(s) as T;
    const n = i + 1;
    row.setAttribute('aria-label', `Dimension ${n}`);
    q('.name').setAttribute('aria-label', `Dimension ${n}: name`);
    q('.type').setAttribute('aria-label', `Dimension ${n}: kind`);
    q('.words').setAttribute('aria-label', `Dimension ${n}: seed words`);
    q('.opposite').setAttribute('aria-label', `Dimension ${n}: opposite pole's seed words`);
    q('.weight').setAttribute('aria-label', `Dimension ${n}: goal weight`);
    q('.remove').setAttribute('aria-label', `Remove dimension ${n}`);
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
      // Keyboard focus stays in the editor: the next row's remove button, else "+ dimension".
      const buttons = box.querySelectorAll<HTMLButtonElement>('button.remove');
      (buttons[Math.min(i, buttons.length - 1)] ?? $('add-dimension')).focus();
    });
    box.append(row);
    row.querySelectorAll<HTMLInputElement>('input.ac').forEach(attachAutocomplete);
  });
}

let listIds = 0;

/**
 * Suggestions under a word field as a listbox: typing shows them, arrow keys move through them,
 * Enter takes the highlighted one (the first by default), Escape closes the list.
 */
export function attachAutocomplete(input: HTMLInputElement): void {
  if (input.dataset.ac) return;
  input.dataset.ac = '1';
  const list = document.createElement('ul');
  list.className = 'ac-list';
  list.id = `ac-list-${++listIds}`;
  list.setAttribute('role', 'listbox');
  list.hidden = true;
  input.after(list);
  input.setAttribute('role', 'combobox');
  input.setAttribute('aria-autocomplete', 'list');
  input.setAttribute('aria-controls', list.id);
  input.setAttribute('aria-expanded', 'false');
  let timer = 0;
  let seq = 0;
  let active = 0;
  const show = (open: boolean): void => {
    list.hidden = !open;
    input.setAttribute('aria-expanded', String(open));
    if (!open) input.removeAttribute('aria-activedescendant');
  };
  const highlight = (i: number): void => {
    const items = [...list.children] as HTMLElement[];
    if (items.length === 0) return;
    active = (i + items.length) % items.length;
    items.forEach((li, j) => li.setAttribute('aria-selected', String(j === active)));
    input.setAttribute('aria-activedescendant', items[active]!.id);
  };
  const pick = (word: string): void => {
    const parts = input.value.split(',');
    parts[parts.length - 1] = (parts.length > 1 ? ' ' : '') + word;
    input.value = parts.join(',') + ', ';
    show(false);
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.focus();
  };
  input.addEventListener('input', (ev) => {
    if (!(ev instanceof InputEvent)) return;
    clearTimeout(timer);
    const frag = input.value.split(',').pop()!.trim();
    if (frag.length < 1) {
      show(false);
      return;
    }
    const my = ++seq;
    timer = window.setTimeout(async () => {
      try {
        const { json } = await run('autocomplete', { word: frag, embeddingModelId: state.modelId });
        if (my !== seq) return;
        list.replaceChildren(
          ...(json.suggestions as string[]).map((w, i) => {
            const li = document.createElement('li');
            li.id = `${list.id}-${i}`;
            li.setAttribute('role', 'option');
            li.textContent = w;
            li.addEventListener('mousedown', (e) => {
              e.preventDefault();
              pick(w);
            });
            return li;
          }),
        );
        show(list.childElementCount > 0);
        highlight(0);
      } catch (err) {
        showError(err);
      }
    }, 120);
  });
  input.addEventListener('keydown', (e) => {
    const open = !list.hidden && list.childElementCount > 0;
    if (e.key === 'Enter' && open) {
      e.preventDefault();
      pick(list.children[active]!.textContent!);
    } else if ((e.key === 'ArrowDown' || e.key === 'ArrowUp') && open) {
      e.preventDefault();
      highlight(active + (e.key === 'ArrowDown' ? 1 : -1));
    } else if (e.key === 'Escape') show(false);
  });
  input.addEventListener('blur', () => setTimeout(() => show(false), 150));
}
