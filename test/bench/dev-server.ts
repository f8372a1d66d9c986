// Kept until test/e2e/browser.test.ts (changed on another branch) imports ../e2e/support/dev-server.
export * from '../e2e/support/dev-server';
