/** Server-Timing: phases measured with performance.now() (workerd advances it only across I/O). */
export class Timing {
  private readonly start = performance.now();
  private last = this.start;
  private readonly parts: string[] = [];
  mark(name: string): void {
    const now = performance.now();
    this.parts.push(`${name};dur=${(now - this.last).toFixed(2)}`);
    this.last = now;
  }
  header(): string {
    return [...this.parts, `total;dur=${(performance.now() - this.start).toFixed(2)}`].join(', ');
  }
}
