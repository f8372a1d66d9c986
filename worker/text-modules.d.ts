// Swagger UI assets bundled as text modules (wrangler.toml Text rule; worker/pages/docs.ts).
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const text: string;
  export default text;
}
declare module 'swagger-ui-dist/swagger-ui.css' {
  const text: string;
  export default text;
}
