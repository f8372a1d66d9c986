/**
 * The whole scoring computation (request object -> response JSON), runtime-agnostic: the
 * Worker and the browser Web Worker call the same functions and so produce identical JSON.
 */
export * from './types';
export * from './common';
export * from './dimensions';
export * from './find';
export * from './text';
export * from './words';
export * from './vocabulary';
export * from './candidates';
export * from './expansion';
export * from './representation';
export * from './steps';
export * from './request-checks';
export {
  compileComposition,
  composeText,
  composedValue,
  VADER,
  FACTORS,
  NEGATION_SCOPE,
  type ComposedItem,
  type CompositionMode,
  composedScore,
  plainItems,
  mapperScale,
} from './composition';
