/**
 * The shared EngineSource suite (test/support/engine-source-suite.ts) on the CLI's source: files
 * under build/generated, the stored dimension in a JSON file as `--stored-dimensions` takes it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { FileSource } from '../../cli/local';
import { createEngine } from '../../core/engine';
import { describeEngineSource, engineCalls, STORED_DIMENSION } from '../support/engine-source-suite';
import { nodeEngineAnswer } from '../support/node-engine';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-source-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describeEngineSource(
  'CLI (files in Node)',
  async () => {
    // The shape of GET /api/v1/artifacts/dimensions, which the CLI reads.
    const storedDimensions = path.join(dir, 'dimensions.json');
    fs.writeFileSync(storedDimensions, JSON.stringify({ data: [STORED_DIMENSION] }));
    return engineCalls(createEngine(new FileSource({ storedDimensions })));
  },
  { reference: nodeEngineAnswer },
);
