// Kept until test/worker/artifacts.test.ts (changed on another branch) imports ./support/api.
export * from './support/api';
