/**
 * Counted nouns in messages (the CLI, the playground) ("1 text", "2 texts", "1 retry"), in one place: English
 * plural categories from Intl.PluralRules, so 0 and 2 take the plural and 1 the singular.
 */
const RULES = new Intl.PluralRules('en');

/** `one` or `other` as `n` asks for (a noun or a verb: "looks" / "look"). */
export function plural(n: number, one: string, other = `${one}s`): string {
  return RULES.select(n) === 'one' ? one : other;
}

/** `n` and its noun: count(1, 'text') is "1 text", count(3, 'retry', 'retries') "3 retries". */
export function count(n: number, one: string, other = `${one}s`): string {
  return `${n} ${plural(n, one, other)}`;
}
