/**
 * Progress of one mapper bundle's training (25-45 s of CPU on the 2-core machine): the phase it is
 * in and how far within it. A cli-progress bar on a terminal; otherwise, or while another process
 * trains beside this one on the same terminal (two bars would overwrite each other), one plain
 * line per phase.
 */
import cliProgress from 'cli-progress';

export interface TrainingProgress {
  /** A new phase of `total` steps of `unit` (e.g. 10 folds). */
  phase(name: string, total: number, unit: string): void;
  update(done: number): void;
  stop(): void;
}

export function trainingProgress(
  label: string,
  options: { stream?: NodeJS.WritableStream & { isTTY?: boolean }; bar?: boolean } = {},
): TrainingProgress {
  const stream = options.stream ?? process.stderr;
  if (options.bar !== false && stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        format: `${label} [{bar}] {percentage}% | {phase}: {value}/{total} {unit}`,
        stream,
        hideCursor: true,
        clearOnComplete: true,
      },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      phase(name, total, unit) {
        if (!started) bar.start(total, 0, { phase: name, unit });
        else {
          bar.setTotal(total);
          bar.update(0, { phase: name, unit });
        }
        started = true;
      },
      update: (done) => bar.update(done),
      stop: () => {
        if (started) bar.stop();
      },
    };
  }
  return {
    phase: (name, total, unit) => void stream.write(`${label}: ${name} (${total.toLocaleString('en-US')} ${unit})\n`),
    update() {},
    stop() {},
  };
}
