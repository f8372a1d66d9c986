/**
 * The offline scorer's settings inside its Web Worker (ScorerConfig, set by the page's configure
 * calls): the service's origin, the bearer token, and whether partial answers go out.
 */
import type { ScorerConfig } from './protocol';

/** One object, updated in place: every module reads the settings of the latest configure call. */
export const config: ScorerConfig = { baseUrl: self.location.origin };

/** Merges the page's settings; an empty baseUrl keeps the current one (setToken sends only the token). */
export function configure(next: ScorerConfig): void {
  Object.assign(config, next, { baseUrl: next.baseUrl || config.baseUrl });
}

/** Whether partial answers go out (`progressive: true`); otherwise a call waits for the complete model when it needs it. */
export const progressive = (): boolean => config.progressive === true;
