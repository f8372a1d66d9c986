// Vite's ?raw imports: a file's text as a string (docs/api.md for the executed docs).
declare module '*.md?raw' {
  const text: string;
  export default text;
}
