// Kept until test/e2e/browser.test.ts (changed on another branch) imports ./support/server.
export * from './support/server';
