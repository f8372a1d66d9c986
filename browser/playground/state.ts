/**
 * The playground's state (the form, the picked model and mode, kept in localStorage) and the
 * small DOM helpers every view uses.
 */
import { defaultModelOf } from '../../core/model-defaults';
import type { OfflineScorer } from '../src/index';

export type Mode = 'api' | 'offline';
export interface ModelOption {
  id: string;
  label: string;
  /** Mapper variable keys, with their bundle's label. */
  mappers: Array<{ key: string; bundleLabel: string; variable: string }>;
  /** ISO 639-1 code: the language picker shows the models of one language. */
  language: string;
  /** An aligned model's English companion (catalog `englishModelId`); unknown for a cached-only listing. */
  companion?: string | null;
}
export interface DimRow {
  id: number;
  name: string;
  type: 'manual' | 'axis';
  words: string;
  opposite: string;
  weight: number;
}

export const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;
export const store = {
  get: (k: string): string | null => localStorage.getItem(`playground.${k}`),
  set: (k: string, v: string): void => localStorage.setItem(`playground.${k}`, v),
};

export const state = {
  token: store.get('token') ?? '',
  mode: (store.get('mode') as Mode) ?? 'api',
  modelId: store.get('model') ?? defaultModelOf('en')!,
  language: store.get('language') ?? '',
  models: [] as ModelOption[],
  offline: null as OfflineScorer | null,
  /** The offline scorer's load of one model (the latest asked for): a load of another model never overwrites it. */
  offlineReady: null as { id: string; promise: Promise<unknown> } | null,
  dims: [] as DimRow[],
  /** User actions running (scorers.ts task): the scorer's progress shows in the status line meanwhile. */
  tasks: 0,
};

export function setStatus(text: string, kind: 'info' | 'error' = 'info'): void {
  const s = $('status');
  s.textContent = text;
  s.className = kind;
  s.removeAttribute('title');
}

export function setMode(mode: Mode): void {
  state.mode = mode;
  store.set('mode', mode);
  document.querySelectorAll<HTMLInputElement>('input[name=mode]').forEach((r) => (r.checked = r.value === mode));
  document.body.dataset.mode = mode;
}
