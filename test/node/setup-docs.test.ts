/**
 * What the README's quick start and docs/cli.md say about setting up matches the project: the
 * Node version is package.json's engines, the CLI's default model is the one cli/ uses, the quick
 * start says how long `npm test` takes and how much disk a setup uses, and every installed package
 * with an install script has an allowScripts decision in package.json (else `npm install` ends
 * with npm's "not yet covered by allowScripts" warning block).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../build/paths';
import { defaultModel } from '../../cli/common';

const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  engines: { node: string };
  allowScripts?: Record<string, boolean>;
};

/** name@version of every installed package (nested ones too) with a preinstall, install or postinstall script. */
function packagesWithInstallScripts(dir: string, out = new Set<string>()): Set<string> {
  if (!fs.existsSync(dir)) return out;
  for (const entry of fs.readdirSync(dir)) {
    if (entry.startsWith('.')) continue;
    const p = path.join(dir, entry);
    if (entry.startsWith('@')) {
      packagesWithInstallScripts(p, out);
      continue;
    }
    const file = path.join(p, 'package.json');
    if (fs.existsSync(file)) {
      const j = JSON.parse(fs.readFileSync(file, 'utf8')) as {
        name: string;
        version: string;
        scripts?: Record<string, string>;
      };
      if (j.scripts?.preinstall || j.scripts?.install || j.scripts?.postinstall) out.add(`${j.name}@${j.version}`);
    }
    packagesWithInstallScripts(path.join(p, 'node_modules'), out);
  }
  return out;
}

describe('the setup the docs describe', () => {
  it("README's quick start names package.json's Node version, the test run's time and the disk it takes", () => {
    const min = /^>=\s*(\d+\.\d+)$/.exec(pkg.engines.node)?.[1];
    expect(min, pkg.engines.node).toBeDefined();
    const readme = read('README.md');
    expect(readme).toContain(`Node ${min} or later`);
    expect(readme).toMatch(/`npm test` takes about \d+ minutes on a 2-core machine/);
    expect(readme).toMatch(/about \d+ GB of disk: `node_modules` ~[\d.]+ GB/);
  });

  it("docs/cli.md gives the CLI's real default model", () => {
    const row = read('docs/cli.md')
      .split('\n')
      .find((l) => l.startsWith('| `-m, --model ID`'));
    // The model the CLI takes when no --model is given.
    expect(row).toContain(`(default \`${defaultModel({})}\`)`);
  });

  it('every installed package with an install script is approved or denied in allowScripts', () => {
    const decided = pkg.allowScripts ?? {};
    const name = (spec: string): string => spec.slice(0, spec.lastIndexOf('@'));
    const undecided = [...packagesWithInstallScripts(path.join(ROOT, 'node_modules'))].filter(
      (spec) => !(spec in decided) && !(name(spec) in decided),
    );
    expect(undecided).toEqual([]);
    // The two whose scripts the build needs: their platform binaries (esbuild for tsx, Vite and wrangler; workerd for Miniflare).
    expect(decided.esbuild).toBe(true);
    expect(decided.workerd).toBe(true);
  });
});
