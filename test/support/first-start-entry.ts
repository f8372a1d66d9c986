/**
 * The first `npm start` with models held back as if their build were still running, for
 * test/node/first-start.test.ts: build/start.ts's startServer with `hold`, the held models released
 * (built and seeded into the running server) when the process gets SIGUSR2. The start script
 * itself has no such option.
 *
 *   tsx test/support/first-start-entry.ts --persist-to DIR [--no-browser] --hold-model ID...
 */
import { parseArgs } from 'node:util';
import { startServer } from '../../build/start';

const { values } = parseArgs({
  options: {
    'persist-to': { type: 'string' },
    'no-browser': { type: 'boolean', default: false },
    'hold-model': { type: 'string', multiple: true, default: [] },
  },
});

startServer({
  persistTo: values['persist-to'],
  browserBundle: !values['no-browser'],
  hold: values['hold-model'],
  onBackground: (background) =>
    process.on('SIGUSR2', () => void background.release().then(() => console.log('[start] released held models'))),
}).catch((err) => {
  console.error(err);
  process.exit(1);
});
