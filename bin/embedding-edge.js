#!/usr/bin/env node
// The CLI is TypeScript (cli/main.ts) run through tsx, like the repository's other scripts.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
